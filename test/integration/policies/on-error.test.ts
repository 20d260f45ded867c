import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { closedPort } from '../../doubles/scripted-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * on-error: a backend that cannot be reached (LastError.Reason BackendConnectionFailure, as Envoy reports it), the
 * default answer without on-error, and every LastError field for a failing policy.
 */
describe('on-error through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    // `X-Status` picks the backend's answer (a 5xx the response phase must see).
    backend = await startEchoBackend((request) => {
      const status = request.headers['x-status'];
      return typeof status === 'string' ? { status: Number(status) } : undefined;
    });
    const nowhere = `http://127.0.0.1:${await closedPort()}`;
    const lastError = `<return-response>
      <set-status code="599" reason="Handled" />
      <set-header name="Content-Type" exists-action="override"><value>application/json</value></set-header>
      <set-body>@(new JObject(
        new JProperty("source", context.LastError.Source),
        new JProperty("reason", context.LastError.Reason),
        new JProperty("scope", context.LastError.Scope),
        new JProperty("section", context.LastError.Section),
        new JProperty("path", context.LastError.Path),
        new JProperty("policyId", context.LastError.PolicyId),
        new JProperty("status", context.Response.StatusCode)
      ).ToString())</set-body>
    </return-response>`;
    gateway = await startGateway(
      `apis:
${apiYaml('down', nowhere, [
  ['handled', 'GET', '/handled', 'handled.xml'],
  ['plain', 'GET', '/plain'],
])}
${apiYaml('fail', backend.url, [
  ['boom', 'GET', '/boom', 'boom.xml'],
  ['guarded', 'GET', '/guarded', 'guarded.xml'],
  ['outbound', 'GET', '/outbound', 'outbound.xml'],
])}
`,
      {
        'handled.xml': policy({ onError: lastError }),
        'boom.xml': policy({
          inbound: `<set-variable name="first" value="1" />
    <choose><when condition="@(false)"><set-variable name="never" value="1" /></when></choose>
    <choose>
      <when condition="@(false)"><set-variable name="never" value="1" /></when>
      <when condition="@(true)">
        <set-variable name="before" value="1" />
        <set-variable id="parse-it" name="n" value="@(int.Parse(context.Request.Headers.GetValueOrDefault(&quot;X-N&quot;, &quot;x&quot;)))" />
      </when>
      <otherwise><set-variable name="never" value="1" /></otherwise>
    </choose>`,
          onError: lastError,
        }),
        'guarded.xml': policy({ onError: lastError }),
        'outbound.xml': policy({
          outbound: '<set-header name="X-Seen" exists-action="override"><value>yes</value></set-header>',
          onError: lastError,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('a backend that cannot be reached runs on-error with reason BackendConnectionFailure', async () => {
    const response = await fetch(`${gateway.url}/down/handled`);
    expect(response.status).toBe(599);
    const error = (await response.json()) as Record<string, unknown>;
    expect(error).toMatchObject({
      source: 'forward-request',
      reason: 'BackendConnectionFailure',
      section: 'backend',
    });
    expect(error.status).toBeGreaterThanOrEqual(500);
  });

  it('without on-error handling the client gets a default status and a safe body, not Envoy internals', async () => {
    const response = await fetch(`${gateway.url}/down/plain`);
    expect(response.status).toBeGreaterThanOrEqual(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ statusCode: response.status, message: 'Internal server error' });
    expect(text).not.toMatch(/upstream|reset|refused/i);
  });

  it('asks Envoy for the response only when on-error can act on it: a failed backend or a 5xx', async () => {
    // Messages Envoy sent the engine, by the ext_proc filter's own count.
    const sent = async () =>
      (await gateway.envoy.stats('ext_proc')).get('http.ingress_http.ext_proc.stream_msgs_sent') ?? 0;
    const messagesFor = async (path: string, headers: Record<string, string> = {}) => {
      const before = await sent();
      const response = await fetch(`${gateway.url}${path}`, { headers });
      await response.arrayBuffer();
      return { status: response.status, messages: (await sent()) - before };
    };
    // on-error is the only reason for the response phase: a 200 from the backend costs the request headers only.
    expect(await messagesFor('/fail/guarded')).toEqual({ status: 200, messages: 1 });
    // Envoy's own reply for a backend it could not reach reaches the engine, and on-error answers.
    expect(await messagesFor('/down/handled')).toEqual({ status: 599, messages: 2 });
    // So does a backend's 5xx (the engine tells it from Envoy's own reply by response.code_details).
    const backendError = await messagesFor('/fail/guarded', { 'x-status': '503' });
    expect(backendError).toEqual({ status: 503, messages: 2 });
    // An outbound section reads every answer.
    expect(await messagesFor('/fail/outbound')).toEqual({ status: 200, messages: 2 });
  });

  it('a failing policy sets every LastError field', async () => {
    const response = await fetch(`${gateway.url}/fail/boom`);
    expect(response.status).toBe(599);
    expect(await response.json()).toEqual({
      source: 'set-variable',
      reason: 'ExpressionValueEvaluationFailure',
      scope: 'operation',
      section: 'inbound',
      // As "Error handling in API Management policies" writes it (`choose\\otherwise\\choose[3]\\when[2]`): an
      // element alone of its name among its siblings is not indexed; several are indexed from 1 among themselves.
      path: 'choose[2]\\when[2]\\set-variable[2]',
      policyId: 'parse-it',
      status: 500,
    });
    expect(backend.received.filter((request) => request.url.startsWith('/boom'))).toHaveLength(0);
  });
});
