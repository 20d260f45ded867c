import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { captureProcessLog } from '../../doubles/logger.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { until } from '../../processes/wait.js';

/**
 * Every line the engine logs while it handles a request carries the request id (Envoy's `x-request-id`, which the
 * engine assigns) and the trace id (here, without a tracer, the one the request's `traceparent` names): the access
 * log line and a line a policy element writes in the middle of the pipeline alike.
 */
describe('request and trace ids on every log line of a request', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;
  let log: ReturnType<typeof captureProcessLog>;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `
apis:
  - id: courses
    urlSuffix: courses
    serviceUrl: ${backend.url}
    operations:
      - id: list
        method: GET
        urlTemplate: /api/Course
        policy: |
          <policies>
            <inbound><base /><trace source="courses" severity="information"><message>listing</message></trace></inbound>
            <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
          </policies>
`,
      {},
      { accessLog: true },
    );
    log = captureProcessLog();
  });

  afterAll(async () => {
    log?.stop();
    await gateway?.stop();
    await backend?.close();
  });

  const linesOf = (requestId: string) => log.lines().filter((line) => line.requestId === requestId);

  it("puts the request id and the traceparent's trace id on the access line and on a policy's line", async () => {
    const requestId = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b';
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await fetch(`${gateway.url}/courses/api/Course`, {
      headers: { 'x-request-id': requestId, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(response.status).toBe(200);
    await response.text();
    await until(() => linesOf(requestId).some((line) => line.message === 'request'), 'the access line');

    const lines = linesOf(requestId);
    expect(lines.map((line) => line.message).sort()).toEqual(['request', 'trace']);
    for (const line of lines) expect(line).toMatchObject({ requestId, traceId });
  });

  it('gives a request without a traceparent its request id and no trace id', async () => {
    const response = await fetch(`${gateway.url}/courses/api/Course`);
    expect(response.status).toBe(200);
    await response.text();
    // The engine assigned the id, and Envoy forwarded it to the backend.
    const requestId = backend.received.at(-1)!.headers['x-request-id'] as string;
    await until(() => linesOf(requestId).some((line) => line.message === 'request'), 'the access line');
    const lines = linesOf(requestId);
    expect(lines.map((line) => line.message).sort()).toEqual(['request', 'trace']);
    for (const line of lines) expect(line).not.toHaveProperty('traceId');
  });
});
