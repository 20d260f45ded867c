import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { captureProcessLog } from '../../doubles/logger.js';
import { type OtlpReceiver, startOtlpReceiver } from '../../doubles/otlp-receiver.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { until } from '../../processes/wait.js';

/**
 * One request id end to end: the `x-request-id` the backend receives is the `requestId` of the engine's access line,
 * whether Envoy traces (telemetry.otlp, its tracer writing the sampling decision into request ids unless told not
 * to) or not, and whether the engine assigned the id or the client sent it.
 */
describe.each([
  ['with tracing (telemetry.otlp)', true],
  ['without tracing', false],
])('one request id from the engine to the backend, %s', (_, traced) => {
  let collector: OtlpReceiver;
  let backend: EchoBackend;
  let gateway: GatewayStack;
  let log: ReturnType<typeof captureProcessLog>;

  beforeAll(async () => {
    collector = await startOtlpReceiver();
    backend = await startEchoBackend();
    gateway = await startGateway(
      [
        ...(traced ? ['telemetry:', `  otlp: { endpoint: "${collector.endpoint}" }`] : []),
        'apis:',
        `  - { id: courses, urlSuffix: courses, serviceUrl: "${backend.url}", operations: [{ method: GET, urlTemplate: /api/Course }], policy: courses.xml }`,
      ].join('\n'),
      // A policy document, so the API goes through the engine (an API without one skips it).
      {
        'courses.xml':
          '<policies><inbound><base /></inbound><backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error></policies>',
      },
      { accessLog: true },
    );
    log = captureProcessLog();
  }, 60_000);

  afterAll(async () => {
    log?.stop();
    await gateway?.stop();
    await backend?.close();
    await collector?.close();
  });

  async function accessLineOf(requestId: string) {
    await until(
      () => log.lines().some((line) => line.message === 'request' && line.requestId === requestId),
      `the access line of ${requestId}`,
      { detail: () => log.text() },
    );
  }

  it('forwards the id the engine assigned and logged', async () => {
    for (let request = 0; request < 3; request++) {
      const response = await fetch(`${gateway.url}/courses/api/Course?n=${request}`);
      expect(response.status).toBe(200);
      await response.text();
      const forwarded = backend.received.find((received) => received.url === `/api/Course?n=${request}`);
      const requestId = String(forwarded?.headers['x-request-id']);
      expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      await accessLineOf(requestId);
    }
  });

  it("forwards the client's own id unchanged", async () => {
    const requestId = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b';
    const response = await fetch(`${gateway.url}/courses/api/Course?client`, {
      headers: { 'x-request-id': requestId },
    });
    expect(response.status).toBe(200);
    await response.text();
    expect(backend.received.at(-1)?.headers['x-request-id']).toBe(requestId);
    await accessLineOf(requestId);
  });
});
