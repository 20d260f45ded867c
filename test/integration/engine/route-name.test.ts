import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessingResponse } from '../../../src/extproc/messages.js';
import { connectFakeEnvoy, headerMap } from '../../doubles/extproc-client.js';
import { type RunningEngine, startEngine } from '../../processes/gateway.js';

// Two APIs on the same suffix, told apart by host; the route name overrides the host.
const config = `
apis:
  - id: internal
    urlSuffix: shop
    serviceUrl: http://127.0.0.1:9
    hostnames: [internal.example]
    policy: internal.xml
    operations: [{ id: list, method: GET, urlTemplate: /items }]
  - id: public
    urlSuffix: shop
    serviceUrl: http://127.0.0.1:9
    policy: public.xml
    operations: [{ id: list, method: GET, urlTemplate: /items }]
`;
const answering = (name: string) =>
  `<policies><inbound><return-response><set-status code="200" /><set-body>${name}</set-body></return-response></inbound><backend /><outbound /><on-error /></policies>`;

describe('the API named by the Envoy route (xds.route_name "portcullis:<api id>")', () => {
  let running: RunningEngine;
  beforeAll(async () => {
    running = await startEngine(config, {
      'internal.xml': answering('internal'),
      'public.xml': answering('public'),
    });
  });
  afterAll(async () => {
    await running.engine.shutdown(1000);
  });

  async function send(path: string, host: string, routeName?: string): Promise<ProcessingResponse> {
    const stream = connectFakeEnvoy(running.engine.port);
    try {
      return await stream.exchange({
        request_headers: {
          headers: headerMap({ ':method': 'GET', ':path': path, ':authority': host, ':scheme': 'http' }),
          end_of_stream: true,
        },
        ...(routeName !== undefined
          ? {
              attributes: {
                'envoy.filters.http.ext_proc': { fields: { 'xds.route_name': { stringValue: routeName } } },
              },
            }
          : {}),
      });
    } finally {
      stream.finish();
      stream.close();
    }
  }
  const answer = (response: ProcessingResponse) => ({
    status: response.immediate_response?.status?.code,
    body: Buffer.from(response.immediate_response?.body ?? '').toString(),
  });

  it('picks the API by host and URL suffix when the route names none', async () => {
    expect(answer(await send('/shop/items', 'public.example'))).toMatchObject({ body: 'public' });
    expect(answer(await send('/shop/items', 'public.example', 'my_own_route'))).toMatchObject({
      body: 'public',
    });
  });

  it('picks the API the route names, whatever the host', async () => {
    expect(answer(await send('/shop/items', 'public.example', 'portcullis:internal'))).toMatchObject({
      body: 'internal',
    });
  });

  it('refuses a route naming an API the configuration lacks, with a safe 500, instead of passing it through', async () => {
    const refused = answer(await send('/shop/items', 'public.example', 'portcullis:nonesuch'));
    expect(refused.status).toBe(500);
    expect(JSON.parse(refused.body)).toEqual({ statusCode: 500, message: 'Internal server error' });
  });

  it("refuses a path outside the named API's URL suffix with 404", async () => {
    const refused = answer(await send('/elsewhere/items', 'public.example', 'portcullis:internal'));
    expect(refused.status).toBe(404);
  });
});
