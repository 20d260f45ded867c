import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { captureProcessLog } from '../../doubles/logger.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { until } from '../../processes/wait.js';

const SECRET = 'S3CRET-subscription-0123456789';
const TOKEN = 'S3CRET-bearer-token-abcdef';
const OTHER = 'S3CRET-custom-query-key-987';
const traceKey = 'operator-trace-key-0123456789';

/**
 * Issue 13 item 6: credentials a client sends (the subscription key as a query parameter, an Authorization header)
 * never appear in what the engine or Envoy write: the access log, the debug trace, a `trace` element's output, a
 * LastError message in the log.
 */
describe('credentials never reach a log line, through Envoy and the engine', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;
  let log: ReturnType<typeof captureProcessLog>;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `
engine: { traceKey: ${traceKey} }
apis:
  - id: courses
    urlSuffix: courses
    serviceUrl: ${backend.url}
    subscriptionRequired: true
    operations:
      - id: list
        method: GET
        urlTemplate: /api/Course
        policy: |
          <policies>
            <inbound>
              <base />
              <trace source="leaky" severity="information">
                <message>@("auth " + context.Request.Headers.GetValueOrDefault("Authorization", "") + " url " + context.Request.OriginalUrl.ToString())</message>
                <metadata name="auth" value="@(context.Request.Headers.GetValueOrDefault("Authorization", ""))" />
              </trace>
            </inbound>
            <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
          </policies>
      - id: fail
        method: GET
        urlTemplate: /api/Fail
        policy: |
          <policies>
            <inbound><base /><set-variable name="n" value="@(int.Parse(context.Request.Headers.GetValueOrDefault("Authorization", "")))" /></inbound>
            <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
          </policies>
  - id: custom
    urlSuffix: custom
    serviceUrl: ${backend.url}
    subscriptionRequired: true
    subscriptionKeyNames: { header: X-Custom-Key, query: ck }
    operations:
      - { id: list-custom, method: GET, urlTemplate: /api/Course }
subscriptions:
  - { id: courses-sub, scope: { api: courses }, primaryKey: ${SECRET} }
  - { id: custom-sub, scope: { api: custom }, primaryKey: ${OTHER} }
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

  const logLines = () => log.lines();
  const accessLine = (requestId: string) =>
    logLines().find((line) => line.message === 'request' && line.requestId === requestId);

  it('redacts the query key and the Authorization header from the access log, the trace and the debug trace', async () => {
    const requestId = '0d7c2c8e-1b7a-4c55-9a8e-3f1e2d4c5b6a';
    const traced = '1e8d3d9f-2c8b-4d66-8b9f-4a2f3e5d6c7b';
    for (const [id, extra] of [
      [requestId, {}],
      [traced, { 'x-portcullis-trace': traceKey }],
    ] as const) {
      const response = await fetch(`${gateway.url}/courses/api/Course?subscription-key=${SECRET}&page=2`, {
        headers: { authorization: `Bearer ${TOKEN}`, 'x-request-id': id, ...extra },
      });
      expect(response.status).toBe(200);
      await response.text();
    }
    await until(
      () => accessLine(requestId) !== undefined && accessLine(traced) !== undefined,
      'the access log',
    );
    await until(() => logLines().some((line) => line.message === 'debug-trace'), 'the debug trace');

    expect(accessLine(requestId)!.path).toBe('/courses/api/Course?subscription-key=***&page=2');
    const trace = logLines().find((line) => line.message === 'trace' && line.requestId === requestId)!;
    expect(trace.trace).toContain('auth Bearer ***');
    expect(trace.metadata).toEqual({ auth: 'Bearer ***' });
    const debug = logLines().find((line) => line.message === 'debug-trace' && line.requestId === traced)!;
    expect(JSON.stringify(debug.entries)).toContain('auth Bearer ***');

    const everything = log.text() + gateway.envoy.log();
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(TOKEN);
  });

  it("redacts a LastError message that quotes the header, and an API's own key parameter", async () => {
    const failing = '2f9e4e0a-3d9c-4e77-9ca0-5b3f4f6e7d8c';
    const custom = '3a0f5f1b-4e0d-4f88-8db1-6c4a5a7f8e9d';
    const failed = await fetch(`${gateway.url}/courses/api/Fail?subscription-key=${SECRET}`, {
      headers: { authorization: `Bearer ${TOKEN}`, 'x-request-id': failing },
    });
    expect(failed.status).toBe(500);
    await failed.text();
    const admitted = await fetch(`${gateway.url}/custom/api/Course?ck=${OTHER}`, {
      headers: { 'x-request-id': custom },
    });
    expect(admitted.status).toBe(200);
    await admitted.text();
    await until(
      () => accessLine(failing) !== undefined && accessLine(custom) !== undefined,
      'the access log',
    );

    expect(accessLine(failing)!.lastError).toMatchObject({
      reason: 'ExpressionValueEvaluationFailure',
      message: expect.stringContaining("'Bearer ***'"),
    });
    expect(accessLine(custom)!.path).toBe('/custom/api/Course?ck=***');

    const everything = log.text() + gateway.envoy.log();
    for (const secret of [SECRET, TOKEN, OTHER]) expect(everything).not.toContain(secret);
  });
});
