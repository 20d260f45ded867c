import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** find-and-replace on the request body (inbound) and the response body (outbound). */
describe('find-and-replace through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend((request) => ({
      headers: { 'content-type': 'text/plain' },
      body: `backend got: ${request.body}; internal-host.local is here`,
    }));
    gateway = await startGateway(
      `apis:\n${apiYaml('far', backend.url, [['post', 'POST', '/text', 'op.xml']])}\n`,
      {
        'op.xml': policy({
          inbound: '<find-and-replace from="cat" to="dog" />',
          outbound: `<find-and-replace from="internal-host.local" to="@(context.Request.OriginalUrl.Host)" />
    <find-and-replace from=" is here" to="" />`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('replaces every occurrence in the request body and in the response body', async () => {
    const response = await fetch(`${gateway.url}/far/text`, { method: 'POST', body: 'cat sat on a cat' });
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.body).toBe('dog sat on a dog');
    expect(await response.text()).toBe('backend got: dog sat on a dog; 127.0.0.1');
  });
});
