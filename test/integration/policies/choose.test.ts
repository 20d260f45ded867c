import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { engineTransports } from '../../processes/ext-authz.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** choose/when/otherwise: the first true `when` wins, later conditions are not evaluated, otherwise is the rest. */
describe.each(engineTransports)('choose through Envoy (%s)', (transport) => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('pick', backend.url, [['get', 'GET', '/thing', 'op.xml']])}\n`,
      {
        'op.xml': policy({
          inbound: `
    <choose>
      <when condition="@(context.Request.Url.Query.GetValueOrDefault(&quot;tier&quot;, &quot;&quot;) == &quot;gold&quot;)">
        <set-header name="X-Branch" exists-action="override"><value>gold</value></set-header>
      </when>
      <when condition="@(context.Request.Url.Query.ContainsKey(&quot;tier&quot;))">
        <set-header name="X-Branch" exists-action="override"><value>other-tier</value></set-header>
      </when>
      <when condition="@(context.Request.Headers.ContainsKey(&quot;X-Boom&quot;) &amp;&amp; int.Parse(&quot;not a number&quot;) == 1)">
        <set-header name="X-Branch" exists-action="override"><value>unreachable</value></set-header>
      </when>
      <otherwise>
        <set-header name="X-Branch" exists-action="override"><value>none</value></set-header>
      </otherwise>
    </choose>`,
        }),
      },
      {},
      undefined,
      transport,
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('the first true when runs', async () => {
    expect((await fetch(`${gateway.url}/pick/thing?tier=gold`)).status).toBe(200);
    expect(backend.received.at(-1)!.headers['x-branch']).toBe('gold');
  });

  it('a later when runs when the earlier ones are false; the conditions after it are not evaluated', async () => {
    const response = await fetch(`${gateway.url}/pick/thing?tier=silver`, { headers: { 'X-Boom': '1' } });
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.headers['x-branch']).toBe('other-tier');
  });

  it('otherwise runs when no condition holds', async () => {
    expect((await fetch(`${gateway.url}/pick/thing`)).status).toBe(200);
    expect(backend.received.at(-1)!.headers['x-branch']).toBe('none');
  });

  it('a condition that throws, once reached, sends the request to on-error (500, backend not called)', async () => {
    const before = backend.received.length;
    const response = await fetch(`${gateway.url}/pick/thing`, { headers: { 'X-Boom': '1' } });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ statusCode: 500, message: 'Internal server error' });
    expect(backend.received.length).toBe(before);
  });
});
