import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedBackend, startScriptedBackend } from '../../doubles/scripted-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * Policy work slower than Envoy's wait for one engine answer (`engine.messageTimeoutMs`, 500 ms as `up` configures
 * it): the policy's own timeouts govern, not Envoy's 504. API Management's send-request `timeout` is "the timeout
 * interval in seconds before the call to the URL fails" (https://learn.microsoft.com/en-us/azure/api-management/
 * send-request-policy), and a call that times out raises `Timeout` into on-error ("forward-request or send-request
 * … Timeout", https://learn.microsoft.com/en-us/azure/api-management/api-management-error-handling-policies).
 */
describe.concurrent('slow policy work through Envoy', () => {
  let backend: ScriptedBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startScriptedBackend((request, response, _body, hit) => {
      const path = (request.url ?? '').split('?')[0];
      const answer = (status: number, text: string) =>
        response.writeHead(status, { 'content-type': 'text/plain' }).end(text);
      if (path === '/one-second') setTimeout(() => answer(200, 'after 1 s'), 1000);
      else if (path === '/five-seconds') setTimeout(() => answer(200, 'after 5 s'), 5000);
      // /never holds the connection and never answers.
      else if (path === '/never') return;
      else if (path === '/unavailable') answer(503, `unavailable ${hit}`);
      else if (path === '/flaky-backend')
        hit === 1 ? answer(503, 'busy') : setTimeout(() => answer(200, `backend after ${hit} calls`), 1000);
      else answer(200, 'fast');
    });
    const side = (name: string, path: string, timeout: number) => `
      <send-request mode="new" response-variable-name="${name}" timeout="${timeout}">
        <set-url>${backend.url}${path}</set-url>
        <set-method>GET</set-method>
      </send-request>`;
    const answerWith = (expression: string) => `
      <return-response>
        <set-status code="200" />
        <set-body>${expression}</set-body>
      </return-response>`;
    const body = (name: string) => `((IResponse)context.Variables["${name}"]).Body.As&lt;string&gt;()`;
    gateway = await startGateway(
      `apis:\n${apiYaml('slow', backend.url, [
        ['one', 'GET', '/one', 'one.xml'],
        ['five', 'GET', '/five', 'five.xml'],
        ['never', 'GET', '/never', 'never.xml'],
        ['second', 'GET', '/second', 'second.xml'],
        ['retried', 'GET', '/retried', 'retried.xml'],
        ['waited', 'GET', '/waited', 'waited.xml'],
        ['outbound', 'GET', '/outbound', 'outbound.xml'],
        ['backend-retry', 'GET', '/flaky-backend', 'backend-retry.xml'],
      ])}\n`,
      {
        'one.xml': policy({ inbound: side('r', '/one-second', 10) + answerWith(`@(${body('r')})`) }),
        'five.xml': policy({ inbound: side('r', '/five-seconds', 10) + answerWith(`@(${body('r')})`) }),
        'never.xml': policy({
          inbound: side('r', '/never', 2) + answerWith('unreachable'),
          onError: `
            <return-response>
              <set-status code="504" reason="Gateway Timeout" />
              <set-body>@(context.LastError.Reason + ": " + context.LastError.Message)</set-body>
            </return-response>`,
        }),
        // Envoy extends its wait once per phase: the second call gets what is left of the first one's 2 s.
        'second.xml': policy({
          inbound: side('a', '/one-second', 2) + side('b', '/never', 60) + answerWith('unreachable'),
          onError: `
            <return-response>
              <set-status code="504" reason="Gateway Timeout" />
              <set-body>@(context.LastError.Reason + ": " + context.LastError.Message)</set-body>
            </return-response>`,
        }),
        // Two retries of a service that stays unavailable, a second apart.
        'retried.xml': policy({
          inbound: `
            <retry condition="@(((IResponse)context.Variables[&quot;r&quot;]).StatusCode == 503)" count="2" interval="1">
              ${side('r', '/unavailable', 5)}
            </retry>${answerWith(`@(${body('r')})`)}`,
        }),
        'waited.xml': policy({
          inbound: `
            <wait for="all">${side('a', '/one-second', 5)}${side('b', '/fast', 5)}</wait>
            ${answerWith(`@(${body('a')} + " / " + ${body('b')})`)}`,
        }),
        // Outbound runs in the response phase: its slow work is extended the same way.
        'outbound.xml': policy({
          outbound: `${side('r', '/one-second', 10)}
            <set-body>@(${body('r')})</set-body>`,
        }),
        // The engine calls the backend again itself (retry around forward-request), after a pause of 1 s.
        'backend-retry.xml': policy(
          {
            backend: `
              <retry condition="@(context.Response.StatusCode == 503)" count="1" interval="1">
                <forward-request timeout="10" />
              </retry>`,
          },
          ['backend'],
        ),
      },
      {},
      // Envoy waits as long for an answer as `up` makes it (the test helper's own default is longer).
      (generated) => withMessageTimeout(generated, '0.5s'),
    );
  }, 30_000);

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('a send-request to a service that takes 1 s gets its answer', async () => {
    const response = await fetch(`${gateway.url}/slow/one`);
    expect(await response.text()).toBe('after 1 s');
    expect(response.status).toBe(200);
  });

  it('a send-request to a service that takes 5 s, within its timeout of 10 s, gets its answer', async () => {
    const response = await fetch(`${gateway.url}/slow/five`);
    expect(await response.text()).toBe('after 5 s');
    expect(response.status).toBe(200);
  });

  it('a send-request to a service that never answers fails with Timeout in on-error at its own timeout', async () => {
    const response = await fetch(`${gateway.url}/slow/never`);
    expect(await response.text()).toBe(`Timeout: Request to 127.0.0.1:${backend.port} timed out.`);
    expect(response.status).toBe(504);
  });

  it('a second slow call in the same phase fails with Timeout in on-error when Envoy will wait no longer', async () => {
    const response = await fetch(`${gateway.url}/slow/second`);
    expect(await response.text()).toBe(`Timeout: Request to 127.0.0.1:${backend.port} timed out.`);
    expect(response.status).toBe(504);
  });

  it('a retry with an interval runs every attempt and pause', async () => {
    const response = await fetch(`${gateway.url}/slow/retried`);
    expect(await response.text()).toMatch(/^unavailable \d+$/);
    expect(response.status).toBe(200);
  });

  it('a wait over a slow call waits for it', async () => {
    const response = await fetch(`${gateway.url}/slow/waited`);
    expect(await response.text()).toBe('after 1 s / fast');
    expect(response.status).toBe(200);
  });

  it('slow work in outbound gets its answer', async () => {
    const response = await fetch(`${gateway.url}/slow/outbound`);
    expect(await response.text()).toBe('after 1 s');
    expect(response.status).toBe(200);
  });

  it('a retry around forward-request calls a backend that takes 1 s again, after its pause', async () => {
    const response = await fetch(`${gateway.url}/slow/flaky-backend`);
    expect(await response.text()).toBe('backend after 2 calls');
    expect(response.status).toBe(200);
  });
});

/** The generated bootstrap with the ext_proc filter's `message_timeout` set to `value`. */
function withMessageTimeout(generated: Record<string, unknown>, value: string): Record<string, unknown> {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([key, child]) => [key, key === 'message_timeout' ? value : visit(child)]),
    );
  };
  return visit(generated) as Record<string, unknown>;
}
