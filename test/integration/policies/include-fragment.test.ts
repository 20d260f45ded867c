import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** include-fragment: statements of a configured fragment (`fragments:`) run where the include stands. */
describe('include-fragment through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `fragments:
  correlation: correlation.xml
  stamp: |
    <fragment>
      <set-header name="X-Stamp" exists-action="override"><value>@(context.Operation.Id)</value></set-header>
    </fragment>
apis:
${apiYaml('frag', backend.url, [['get', 'GET', '/f', 'op.xml']])}
`,
      {
        'correlation.xml': `<fragment>
  <set-variable name="cid" value="@(context.Request.Headers.GetValueOrDefault(&quot;X-Correlation-Id&quot;, &quot;generated&quot;))" />
  <set-header name="X-Correlation-Id" exists-action="override"><value>@((string)context.Variables["cid"])</value></set-header>
</fragment>`,
        'op.xml': policy({
          inbound: '<include-fragment fragment-id="correlation" /><include-fragment fragment-id="stamp" />',
          outbound: `<set-header name="X-Correlation-Id" exists-action="override"><value>@((string)context.Variables["cid"])</value></set-header>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('runs the fragments from a file and inline, in place', async () => {
    const response = await fetch(`${gateway.url}/frag/f`, { headers: { 'X-Correlation-Id': 'abc-123' } });
    expect(response.status).toBe(200);
    const headers = backend.received.at(-1)!.headers;
    expect(headers['x-correlation-id']).toBe('abc-123');
    expect(headers['x-stamp']).toBe('get');
    expect(response.headers.get('x-correlation-id')).toBe('abc-123');
  });

  it('the fragment sets its default when the client sent none', async () => {
    const response = await fetch(`${gateway.url}/frag/f`);
    expect(backend.received.at(-1)!.headers['x-correlation-id']).toBe('generated');
    expect(response.headers.get('x-correlation-id')).toBe('generated');
  });
});
