import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** set-variable: literals are strings, expressions keep their type, variables live from inbound to outbound. */
describe('set-variable through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('vars', backend.url, [['get', 'GET', '/items/{id}', 'op.xml']])}\n`,
      {
        'op.xml': policy({
          inbound: `
    <set-variable name="who" value="@(context.Request.Headers.GetValueOrDefault(&quot;X-Name&quot;, &quot;anonymous&quot;))" />
    <set-variable name="double" value="@(int.Parse(context.Request.MatchedParameters[&quot;id&quot;]) * 2)" />
    <set-variable name="plain" value="literal text" />
    <set-header name="X-Who" exists-action="override"><value>@((string)context.Variables["who"])</value></set-header>
    <set-header name="X-Double" exists-action="override"><value>@(((int)context.Variables["double"] + 1).ToString())</value></set-header>
    <set-header name="X-Plain-Type" exists-action="override"><value>@((context.Variables["plain"] is string).ToString())</value></set-header>`,
          outbound: `
    <set-variable name="status" value="@(context.Response.StatusCode)" />
    <set-header name="X-Seen" exists-action="override"><value>@((string)context.Variables["who"] + "/" + (int)context.Variables["status"])</value></set-header>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('inbound variables reach the backend through set-header, typed as the expression made them', async () => {
    const response = await fetch(`${gateway.url}/vars/items/21`, { headers: { 'X-Name': 'ada' } });
    expect(response.status).toBe(200);
    const received = backend.received.at(-1)!;
    expect(received.url).toBe('/items/21');
    expect(received.headers['x-who']).toBe('ada');
    expect(received.headers['x-double']).toBe('43');
    expect(received.headers['x-plain-type']).toBe('True');
  });

  it('a variable set in inbound is still there in outbound', async () => {
    const response = await fetch(`${gateway.url}/vars/items/1`);
    expect(response.headers.get('x-seen')).toBe('anonymous/200');
    expect(backend.received.at(-1)!.headers['x-who']).toBe('anonymous');
  });
});
