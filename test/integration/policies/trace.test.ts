import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { logLines } from '../../doubles/logger.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** trace: each entry reaches the engine's trace sink (a structured log line) with its source, message and metadata. */
describe('trace through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;
  let lines: Record<string, unknown>[];

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('tr', backend.url, [['get', 'GET', '/t/{id}', 'op.xml']])}\n`,
      {
        'op.xml': policy({
          inbound: `<trace source="course-api" severity="information">
      <message>@("looking up course " + context.Request.MatchedParameters["id"])</message>
      <metadata name="operation" value="@(context.Operation.Id)" />
    </trace>`,
          outbound: `<trace source="course-api"><message>@("backend said " + context.Response.StatusCode)</message></trace>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  beforeEach(() => {
    lines = [];
  });

  afterEach(() => {
    lines = [];
  });

  it('writes one entry per trace element, in inbound and outbound, with the request id', async () => {
    const requestId = '5d2c7a0e-8f4b-4c1e-9a3d-2b6f1e0c9d87';
    lines = await logLines(async () => {
      const response = await fetch(`${gateway.url}/tr/t/42`, { headers: { 'x-request-id': requestId } });
      expect(response.status).toBe(200);
      await response.text();
    });
    const traces = lines.filter((line) => line.source === 'course-api');
    expect(traces).toEqual([
      expect.objectContaining({
        requestId,
        source: 'course-api',
        severity: 'information',
      }),
      expect.objectContaining({ requestId, source: 'course-api', severity: 'verbose' }),
    ]);
    expect(JSON.stringify(traces[0])).toContain('looking up course 42');
    expect(traces[0]!.metadata).toEqual({ operation: 'get' });
    expect(JSON.stringify(traces[1])).toContain('backend said 200');
  });
});
