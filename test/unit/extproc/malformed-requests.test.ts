/**
 * Requests the fuzzing harness (test/fuzz) found to throw inside the engine: each now gets an answer and no handler
 * fails. Over a real gRPC stream to the real engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectFakeEnvoy, headerMap } from '../../doubles/extproc-client.js';
import { EXTPROC_GATEWAY } from '../../processes/extproc-gateway.js';
import { type RunningEngine, startEngine } from '../../processes/gateway.js';

const POLICY = `<policies>
  <inbound><base /><set-header name="x-path" exists-action="override"><value>@(context.Request.Url.Path)</value></set-header></inbound>
  <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
</policies>`;

describe('malformed requests get an answer, not a handler error', () => {
  let running: RunningEngine;
  const handlerErrors: string[] = [];

  beforeAll(async () => {
    running = await startEngine(
      EXTPROC_GATEWAY,
      { 'courses.xml': POLICY },
      {},
      {
        onHandlerError: (error) => handlerErrors.push(String(error)),
      },
    );
  });
  afterAll(async () => {
    await running?.engine.shutdown(100);
  });

  async function send(headers: Record<string, string>) {
    const envoy = connectFakeEnvoy(running.engine.port);
    try {
      return await envoy.exchange({ request_headers: { headers: headerMap(headers), end_of_stream: true } });
    } finally {
      envoy.finish();
      envoy.close();
    }
  }

  it('a path with a malformed escape: 400 (the path cannot be normalised), no handler error', async () => {
    const answer = await send({
      ':path': '/courses/api/Course/%ZZ%41',
      ':method': 'GET',
      ':authority': 'g',
      ':scheme': 'http',
    });
    expect(answer.immediate_response?.status.code).toBe(400);
    expect(handlerErrors).toEqual([]);
  });

  it('a scheme or authority that makes no URL: 400 with a JSON body', async () => {
    for (const headers of [
      { ':path': '/courses/api/Course/1', ':method': 'GET', ':authority': 'a b', ':scheme': 'http' },
      { ':path': '/courses/api/Course/1', ':method': 'GET', ':authority': 'g', ':scheme': 'no scheme' },
    ]) {
      const answer = await send(headers);
      expect(answer.immediate_response?.status.code).toBe(400);
      expect(JSON.parse(answer.immediate_response!.body!.toString())).toEqual({
        statusCode: 400,
        message: 'The request URL is malformed.',
      });
    }
    expect(handlerErrors).toEqual([]);
  });
});
