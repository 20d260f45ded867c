import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { captureProcessLog } from '../../doubles/logger.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { until } from '../../processes/wait.js';

const traceKey = 'operator-trace-key-0123456789';

/** An operator switches on a debug trace for one request, with the configured key, without a restart. */
describe('per-request debug trace through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;
  let logged: ReturnType<typeof captureProcessLog>;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `
engine: { traceKey: ${traceKey} }
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
            <inbound><base /><trace source="course-trace" severity="information"><message>@("looking up " + context.Request.Url.Path)</message></trace></inbound>
            <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
          </policies>
      - id: item
        method: GET
        urlTemplate: /api/Course/{id}
        policy: |
          <policies>
            <inbound><base />
              <set-header name="x-course" exists-action="override"><value>@("course-" + context.Request.MatchedParameters["id"])</value></set-header>
              <set-header name="x-api-key" exists-action="override"><value>@("key-" + context.Request.MatchedParameters["id"])</value></set-header>
              <rewrite-uri template="@("/api/v2/Course/" + context.Request.MatchedParameters["id"])" />
            </inbound>
            <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
          </policies>
`,
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  /** The engine logs a trace when the exchange's stream ends, which may be after the client has its answer. */
  const traceLines = () =>
    logged
      .text()
      .split('\n')
      .filter((line) => line.includes('"debug-trace"'));

  function captureLog() {
    const log = captureProcessLog();
    logged = log;
    return { mockRestore: log.stop };
  }

  it('traces a request that carries the key: one debug-trace log line, the request id in the answer', async () => {
    const spy = captureLog();
    const response = await fetch(`${gateway.url}/courses/api/Course`, {
      headers: { 'x-portcullis-trace': traceKey },
    });
    await until(() => traceLines().length > 0, 'the debug-trace line', 5000);
    spy.mockRestore();
    expect(response.status).toBe(200);
    const traceId = response.headers.get('x-portcullis-trace-id');
    expect(traceId).toMatch(/^[0-9a-f-]{36}$/);
    // The key is a credential: the backend never sees it.
    expect(backend.received.at(-1)!.headers['x-portcullis-trace']).toBeUndefined();
    const lines = traceLines();
    expect(lines).toHaveLength(1);
    const trace = JSON.parse(lines[0]!);
    expect(trace).toMatchObject({
      message: 'debug-trace',
      requestId: traceId,
      api: 'courses',
      operation: 'list',
      outcome: 'forwarded',
      entries: [{ source: 'course-trace', severity: 'information', message: 'looking up /api/Course' }],
    });
    expect(trace.pipeline.inbound).toEqual(['trace']);
    // Every element with where it was written and its outcome: the format `portcullis run` and `test` print.
    expect(trace.steps).toMatchObject([
      { element: 'trace', section: 'inbound', outcome: 'next', depth: 0 },
      { element: 'forward-request', section: 'backend', outcome: 'next', at: '<default global>:3:12' },
    ]);
    expect(trace.steps[0].at).toMatch(/gateway.yaml \(apis\[0\].operations\[0\].policy\):\d+:\d+$/);
  });

  it("shows the values the policy expressions computed, a credential header's removed", async () => {
    const spy = captureLog();
    const response = await fetch(`${gateway.url}/courses/api/Course/42`, {
      headers: { 'x-portcullis-trace': traceKey },
    });
    await until(() => traceLines().length > 0, 'the debug-trace line', 5000);
    spy.mockRestore();
    expect(response.status).toBe(200);
    const received = backend.received.at(-1)!;
    expect(received.url).toBe('/api/v2/Course/42');
    expect(received.headers['x-course']).toBe('course-42');
    const trace = JSON.parse(traceLines()[0]!);
    expect(trace.steps).toMatchObject([
      { element: 'set-header', values: { 'x-course': '"course-42"' } },
      { element: 'set-header', values: { 'x-api-key': '***' } },
      { element: 'rewrite-uri', values: { '@template': '"/api/v2/Course/42"' } },
      { element: 'forward-request' },
    ]);
    expect(traceLines()[0]).not.toContain('key-42');
  });

  it('does not trace a request with a wrong key or none', async () => {
    const spy = captureLog();
    const wrong = await fetch(`${gateway.url}/courses/api/Course`, {
      headers: { 'x-portcullis-trace': 'guess' },
    });
    const none = await fetch(`${gateway.url}/courses/api/Course`);
    // A last request with the key: once its trace is logged, the two before it have ended untraced.
    const traced = await fetch(`${gateway.url}/courses/api/Course`, {
      headers: { 'x-portcullis-trace': traceKey },
    });
    await until(() => traceLines().length > 0, 'the debug-trace line of the traced request', 5000);
    spy.mockRestore();
    expect(wrong.headers.get('x-portcullis-trace-id')).toBeNull();
    expect(none.headers.get('x-portcullis-trace-id')).toBeNull();
    const lines = traceLines();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).requestId).toBe(traced.headers.get('x-portcullis-trace-id'));
  });
});
