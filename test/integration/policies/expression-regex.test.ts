import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

const EVIL = 'a*a*a*a*a*a*a*b';

/**
 * Issue 13: `Regex.IsMatch(s, "a*a*a*a*a*a*a*b")` on 60 `a`s kept the only engine busy ~15 s and every other API
 * answered 504. Expression regexes now run on a linear-time engine: the hostile request gets its answer and a request
 * to another API, sent at the same time, is answered normally by the same engine.
 */
describe('expression regexes through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('scan', backend.url, [['check', 'GET', '/check', 'scan.xml']])}\n` +
        `${apiYaml('plain', backend.url, [['ping', 'GET', '/ping', 'plain.xml']])}\n`,
      {
        'scan.xml': policy({
          inbound: `
    <set-header name="X-Match" exists-action="override">
      <value>@(Regex.IsMatch(context.Request.Headers.GetValueOrDefault("X-Input", ""), "${EVIL}").ToString())</value>
    </set-header>`,
        }),
        'plain.xml': policy({
          inbound: `
    <set-header name="X-Plain" exists-action="override"><value>@(context.Request.Method)</value></set-header>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  const seenBy = (api: string, header: string) =>
    backend.received.find(
      (r) => r.url.startsWith(`/${api === 'scan' ? 'check' : 'ping'}`) && header in r.headers,
    );

  it('a hostile regex input gets its answer while another API, called at the same time, answers 200', async () => {
    const [hostile, other] = await Promise.all([
      fetch(`${gateway.url}/scan/check`, { headers: { 'X-Input': 'a'.repeat(60) } }),
      fetch(`${gateway.url}/plain/ping`),
    ]);
    expect(other.status).toBe(200);
    expect(hostile.status).toBe(200);
    expect(seenBy('plain', 'x-plain')?.headers['x-plain']).toBe('GET');
    expect(seenBy('scan', 'x-match')?.headers['x-match']).toBe('False');
  });

  it('the same pattern matches when it should', async () => {
    const response = await fetch(`${gateway.url}/scan/check`, {
      headers: { 'X-Input': `${'a'.repeat(60)}b` },
    });
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.headers['x-match']).toBe('True');
  });

  it('a policy whose literal pattern needs backtracking is refused at load, naming file, line and column', async () => {
    // Stopped at once should it start (it must not), so a failing run leaves no Envoy behind.
    const refused = startGateway(
      `apis:\n${apiYaml('look', backend.url, [['get', 'GET', '/x', 'look.xml']])}\n`,
      {
        'look.xml': policy({
          inbound: `
    <set-variable name="ok" value="@(Regex.IsMatch(context.Request.Url.Path, &quot;^/x(?=y)&quot;))" />`,
        }),
      },
    );
    await expect(refused).rejects.toThrow(
      /look\.xml:5:\d+: .*Regex\.IsMatch: the regular expression "\^\/x\(\?=y\)" cannot be used: a lookahead '\(\?=' at offset 3 needs a backtracking engine/,
    );
  });
});
