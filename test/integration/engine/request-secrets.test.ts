import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { captureProcessLog } from '../../doubles/logger.js';
import { scratchFolder } from '../../fixtures/scratch.js';
import { runCli } from '../../processes/cli.js';
import { type GatewayStack, startGatewayForFile } from '../../processes/gateway.js';
import { until } from '../../processes/wait.js';

const traceKey = 'operator-trace-key-0123456789';
/** A secret named value the policy writes into a trace message. */
const customerKey = 'demo-customer-key-5f3a9c';
/** A credential with no scheme (`Authorization: <token>`), which no shape of redact.ts recognises. */
const rawCredential = 'raw-opaque-credential-7d41e2';
const signingSecret = Buffer.from('request-secrets-signing-key-0123');

/**
 * Issue 29 items 3 and 4: what a request's policies trace or log passes through the request's secret values — the
 * secret named values, the credentials the request carried, the JWTs a policy stored — replaced wherever they occur,
 * in a concatenation too, in the `trace` element's log line, context.Trace's, the live debug trace and
 * `portcullis run`'s output; a variable holding a token shows as `***`.
 */
describe("a request's secret values never reach its trace or log lines", () => {
  const { write } = scratchFolder('request-secrets');
  let backend: EchoBackend;
  let gateway: GatewayStack;
  let config: string;
  let jwt: string;

  beforeAll(async () => {
    backend = await startEchoBackend();
    jwt = await new SignJWT({ scp: 'Orders.Read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('user-42')
      .setExpirationTime('1h')
      .sign(signingSecret);
    write(
      'item.xml',
      `<policies>
  <inbound>
    <base />
    <validate-jwt header-name="X-Token" output-token-variable-name="jwt">
      <issuer-signing-keys><key>{{signing-key}}</key></issuer-signing-keys>
    </validate-jwt>
    <trace source="t" severity="information">
      <message>@("nv={{customer-key}} x " + context.Request.Headers.GetValueOrDefault("Authorization", "") + " jwt " + context.Variables["jwt"].ToString() + " sub " + ((Jwt)context.Variables["jwt"]).Subject)</message>
      <metadata name="auth" value="@("x " + context.Request.Headers.GetValueOrDefault("Authorization", ""))" />
    </trace>
    <set-variable name="traced" value="@{ context.Trace("ctx nv={{customer-key}} x " + context.Request.Headers.GetValueOrDefault("Authorization", "")); return true; }" />
  </inbound>
  <backend><base /></backend>
  <outbound><base /></outbound>
  <on-error><base /></on-error>
</policies>
`,
    );
    config = write(
      'gateway.yaml',
      `engine: { traceKey: ${traceKey} }
namedValues:
  customer-key: { value: ${customerKey}, secret: true }
  signing-key: { value: ${signingSecret.toString('base64')}, secret: true }
apis:
  - id: orders
    urlSuffix: orders
    serviceUrl: ${backend.url}
    operations:
      - { id: item, method: GET, urlTemplate: /item, policy: item.xml }
`,
    );
    gateway = await startGatewayForFile(config);
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  const secrets = () => [customerKey, rawCredential, jwt];

  it("redacts the trace element's and context.Trace's log lines by value, in concatenations", async () => {
    const log = captureProcessLog();
    const requestId = '6b1f0c2d-7e3a-4b5c-8d9e-0f1a2b3c4d5e';
    try {
      const response = await fetch(`${gateway.url}/orders/item`, {
        headers: { authorization: rawCredential, 'x-token': jwt, 'x-request-id': requestId },
      });
      expect(response.status).toBe(200);
      await response.text();
      await until(
        () =>
          log.lines().filter((line) => line.message === 'trace' && line.requestId === requestId).length === 2,
        'the two trace lines',
      );
    } finally {
      log.stop();
    }
    const traces = log.lines().filter((line) => line.message === 'trace' && line.requestId === requestId);
    expect(traces).toEqual([
      expect.objectContaining({
        source: 't',
        trace: 'nv=*** x *** jwt *** sub user-42',
        metadata: { auth: 'x ***' },
      }),
      expect.objectContaining({ source: 'context.Trace', trace: 'ctx nv=*** x ***' }),
    ]);
    for (const secret of secrets()) expect(log.text()).not.toContain(secret);
  });

  it('redacts the live debug trace: its entries, and the variable holding the JWT shows as ***', async () => {
    const log = captureProcessLog();
    try {
      const response = await fetch(`${gateway.url}/orders/item`, {
        headers: { authorization: rawCredential, 'x-token': jwt, 'x-portcullis-trace': traceKey },
      });
      expect(response.status).toBe(200);
      await response.text();
      await until(() => log.lines().some((line) => line.message === 'debug-trace'), 'the debug trace');
    } finally {
      log.stop();
    }
    const debug = log.lines().find((line) => line.message === 'debug-trace')!;
    expect(debug.entries).toEqual([
      { source: 't', severity: 'information', message: 'nv=*** x *** jwt *** sub user-42' },
      { source: 'context.Trace', severity: 'verbose', message: 'ctx nv=*** x ***' },
    ]);
    const steps = debug.steps as { element: string; variables?: Record<string, string> }[];
    expect(steps.find((step) => step.element === 'validate-jwt')?.variables).toEqual({ jwt: '***' });
    for (const secret of secrets()) expect(log.text()).not.toContain(secret);
  });

  it('redacts what `portcullis run` prints: the trace, the steps, and the JWT variable', async () => {
    const args = [
      'run',
      '--config',
      config,
      '-H',
      `Authorization: ${rawCredential}`,
      '-H',
      `X-Token: ${jwt}`,
    ];
    const text = await runCli([...args, 'GET', '/orders/item']);
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('trace t information: nv=*** x *** jwt *** sub user-42 auth=x ***');
    expect(text.stdout).toContain('trace context.Trace verbose: ctx nv=*** x ***');
    expect(text.stdout).toMatch(/validate-jwt {2}next {2}jwt=\*\*\* /);
    const json = await runCli([...args, '--json', 'GET', '/orders/item']);
    expect(json.status).toBe(0);
    const printed = JSON.parse(json.stdout) as {
      backend: { headers: [string, string][] };
      steps: { element: string; variables?: object }[];
    };
    expect(printed.steps.find((step) => step.element === 'validate-jwt')?.variables).toEqual({ jwt: '***' });
    // What the backend received is shown as a trace shows it: the credential header's value and the token removed.
    expect(printed.backend.headers).toEqual(
      expect.arrayContaining([
        ['authorization', '***'],
        ['x-token', '***'],
      ]),
    );
    for (const secret of secrets()) {
      expect(text.stdout).not.toContain(secret);
      expect(json.stdout).not.toContain(secret);
    }
  });
});
