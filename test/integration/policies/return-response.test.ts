import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** return-response: answers from inbound without the backend; response-variable-name returns a stored response. */
describe('return-response through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend((request) =>
      request.url === '/stored' ? { status: 202, body: 'accepted later' } : undefined,
    );
    gateway = await startGateway(
      `apis:\n${apiYaml('rr', backend.url, [
        ['built', 'GET', '/built', 'built.xml'],
        ['empty', 'GET', '/empty', 'empty.xml'],
        ['stored', 'GET', '/stored', 'stored.xml'],
        ['sent', 'GET', '/sent', 'sent.xml'],
      ])}\n`,
      {
        'built.xml': policy({
          inbound: `
    <return-response>
      <set-status code="418" reason="I'm a teapot" />
      <set-header name="X-Answer" exists-action="override"><value>@(context.Request.Url.Query.GetValueOrDefault("q", "none"))</value></set-header>
      <set-header name="Content-Type" exists-action="override"><value>application/json</value></set-header>
      <set-body>{"brewed":false}</set-body>
    </return-response>`,
        }),
        'empty.xml': policy({ inbound: '<return-response />' }),
        'sent.xml': policy({
          inbound: `
    <send-request mode="new" response-variable-name="side" timeout="5" ignore-error="false">
      <set-url>${backend.url}/side-call</set-url>
      <set-method>GET</set-method>
    </send-request>
    <return-response response-variable-name="side">
      <set-status code="203" reason="Non-Authoritative Information" />
    </return-response>`,
        }),
        'stored.xml': policy({
          outbound: `
    <set-variable name="upstream" value="@(context.Response)" />
    <return-response response-variable-name="upstream">
      <set-header name="X-Wrapped" exists-action="override"><value>yes</value></set-header>
    </return-response>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('answers with the status, headers and body its children set; the backend is not called', async () => {
    const before = backend.received.length;
    const response = await fetch(`${gateway.url}/rr/built?q=42`);
    expect(response.status).toBe(418);
    expect(response.headers.get('x-answer')).toBe('42');
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ brewed: false });
    expect(backend.received.length).toBe(before);
  });

  it('without children answers 200 with an empty body', async () => {
    const response = await fetch(`${gateway.url}/rr/empty`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it('response-variable-name answers with the stored response, changed by its children', async () => {
    const response = await fetch(`${gateway.url}/rr/stored`);
    expect(response.status).toBe(202);
    expect(response.headers.get('x-wrapped')).toBe('yes');
    expect(await response.text()).toBe('accepted later');
  });

  it('response-variable-name answers with a send-request response, the operation backend call skipped', async () => {
    const response = await fetch(`${gateway.url}/rr/sent`);
    expect(response.status).toBe(203);
    expect(((await response.json()) as { url: string }).url).toBe('/side-call');
    expect(backend.received.map((r) => r.url)).not.toContain('/sent');
  });
});
