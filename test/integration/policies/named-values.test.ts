import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { logLines } from '../../doubles/logger.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * Named values (`namedValues:`) substituted in policies; a secret one reaches the backend where a policy puts it,
 * but never a client response nor a log line, even when an expression that holds it fails.
 */
describe('named values through Envoy', () => {
  const secret = 'sk-live-5ecr3t-v4lue';
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `namedValues:
  api-key: { value: "${secret}", secret: true }
  tier: gold
apis:
${apiYaml('nv', backend.url, [
  ['use', 'GET', '/use', 'use.xml'],
  ['fail', 'GET', '/fail', 'fail.xml'],
])}
`,
      {
        'use.xml': policy({
          inbound: `<set-header name="X-Api-Key" exists-action="override"><value>{{api-key}}</value></set-header>
    <set-header name="X-Tier" exists-action="override"><value>{{tier}}</value></set-header>
    <set-header name="X-Tier-Length" exists-action="override"><value>@("{{tier}}".Length.ToString())</value></set-header>`,
        }),
        'fail.xml': policy({
          inbound: '<set-variable name="n" value="@(int.Parse(&quot;{{api-key}}&quot;))" />',
          onError: `<return-response>
      <set-status code="500" reason="Failed" />
      <set-body>@(context.LastError.Message + " | " + context.LastError.Reason)</set-body>
    </return-response>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('substitutes named values in values and inside expressions', async () => {
    const response = await fetch(`${gateway.url}/nv/use`);
    expect(response.status).toBe(200);
    const headers = backend.received.at(-1)!.headers;
    expect(headers['x-api-key']).toBe(secret);
    expect(headers['x-tier']).toBe('gold');
    expect(headers['x-tier-length']).toBe('4');
  });

  it('a failing expression that holds a secret does not show it in the response nor in the log', async () => {
    let body = '';
    const lines = await logLines(async () => {
      const response = await fetch(`${gateway.url}/nv/fail`);
      expect(response.status).toBe(500);
      body = await response.text();
    });
    expect(body).toContain('ExpressionValueEvaluationFailure');
    expect(body).not.toContain(secret);
    expect(JSON.stringify(lines)).not.toContain(secret);
  });
});
