import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * send-request mode="copy": "a copy of the headers and body in the current request"
 * (https://learn.microsoft.com/en-us/azure/api-management/send-request-policy, attribute `mode`). The copy carries
 * the client's body even when no other statement reads it, which is when the engine would otherwise not ask Envoy
 * for the body at all.
 */
describe('send-request mode="copy" through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend((request) =>
      request.url.startsWith('/copy-target') ? { body: `copied: ${request.body}` } : undefined,
    );
    const copy = (mode: string) => `
      <send-request mode="${mode}" response-variable-name="copied" timeout="5">
        <set-url>${backend.url}/copy-target</set-url>
      </send-request>
      <return-response>
        <set-status code="200" />
        <set-body>@(((IResponse)context.Variables["copied"]).Body.As&lt;string&gt;())</set-body>
      </return-response>`;
    gateway = await startGateway(
      `apis:\n${apiYaml('cp', backend.url, [
        ['literal', 'POST', '/literal', 'literal.xml'],
        ['expression', 'POST', '/expression', 'expression.xml'],
      ])}\n`,
      {
        'literal.xml': policy({ inbound: copy('copy') }),
        'expression.xml': policy({ inbound: copy('@("co" + "py")') }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('sends the client request body when no other statement reads it', async () => {
    const response = await fetch(`${gateway.url}/cp/literal`, { method: 'POST', body: 'order 42' });
    expect(await response.text()).toBe('copied: order 42');
    expect(response.status).toBe(200);
  });

  it('sends it too when the mode is an expression that comes out "copy"', async () => {
    const response = await fetch(`${gateway.url}/cp/expression`, { method: 'POST', body: 'order 43' });
    expect(await response.text()).toBe('copied: order 43');
    expect(response.status).toBe(200);
  });
});
