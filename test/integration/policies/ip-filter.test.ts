import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { engineTransports } from '../../processes/ext-authz.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * ip-filter against the client address as Envoy saw it (127.0.0.1 on loopback; a client's X-Forwarded-For is not
 * trusted by an edge gateway).
 */
describe.each(engineTransports)('ip-filter through Envoy (%s)', (transport) => {
  let backend: EchoBackend;
  let gateway: GatewayStack;
  const lastError = `<set-header name="X-Reason" exists-action="override"><value>@(context.LastError.Reason)</value></set-header>
    <set-header name="X-Message" exists-action="override"><value>@(context.LastError.Message)</value></set-header>`;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('ipf', backend.url, [
        ['allowed', 'GET', '/allowed', 'allowed.xml'],
        ['ranged', 'GET', '/ranged', 'ranged.xml'],
        ['outside', 'GET', '/outside', 'outside.xml'],
        ['blocked', 'GET', '/blocked', 'blocked.xml'],
        ['v6', 'GET', '/v6', 'v6.xml'],
        ['ip', 'GET', '/ip', 'ip.xml'],
      ])}\n`,
      {
        'allowed.xml': policy({
          inbound: '<ip-filter action="allow"><address>127.0.0.1</address></ip-filter>',
        }),
        'ranged.xml': policy({
          inbound:
            '<ip-filter action="allow"><address-range from="127.0.0.0" to="127.255.255.255" /></ip-filter>',
        }),
        'outside.xml': policy({
          inbound:
            '<ip-filter action="allow"><address-range from="10.0.0.0" to="10.255.255.255" /></ip-filter>',
          onError: lastError,
        }),
        'blocked.xml': policy({
          inbound: `<ip-filter action="forbid"><address>192.0.2.1</address><address>127.0.0.1</address></ip-filter>`,
          onError: lastError,
        }),
        'v6.xml': policy({ inbound: '<ip-filter action="forbid"><address>::1</address></ip-filter>' }),
        'ip.xml': policy({
          inbound:
            '<set-header name="X-Client-Ip" exists-action="override"><value>@(context.Request.IpAddress)</value></set-header>',
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

  it('context.Request.IpAddress is the address Envoy saw, not a forwarded-for header', async () => {
    await fetch(`${gateway.url}/ipf/ip`, { headers: { 'X-Forwarded-For': '203.0.113.9' } });
    expect(backend.received.at(-1)!.headers['x-client-ip']).toBe('127.0.0.1');
  });

  it('allow with a listed address lets the caller through', async () => {
    expect((await fetch(`${gateway.url}/ipf/allowed`)).status).toBe(200);
    expect(backend.received.at(-1)!.url).toBe('/allowed');
  });

  it('allow with an address range that holds the caller lets it through', async () => {
    expect((await fetch(`${gateway.url}/ipf/ranged`)).status).toBe(200);
  });

  it('allow refuses a caller outside the range with 403, even with a spoofed X-Forwarded-For', async () => {
    const before = backend.received.length;
    const response = await fetch(`${gateway.url}/ipf/outside`, {
      headers: { 'X-Forwarded-For': '10.1.2.3' },
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ statusCode: 403, message: 'Forbidden' });
    // LastError.Message is API Management's text ("Error handling in API Management policies", predefined errors).
    expect(response.headers.get('x-message')).toBe(
      'Caller IP address 127.0.0.1 is not allowed. Access denied.',
    );
    expect(backend.received.length).toBe(before);
  });

  it('forbid refuses a listed caller with CallerIpBlocked', async () => {
    const response = await fetch(`${gateway.url}/ipf/blocked`);
    expect(response.status).toBe(403);
    expect(response.headers.get('x-reason')).toBe('CallerIpBlocked');
    expect(response.headers.get('x-message')).toBe('Caller IP address is blocked. Access denied.');
    expect(await response.json()).toEqual({ statusCode: 403, message: 'Forbidden' });
  });

  it('an IPv6 rule does not match an IPv4 caller', async () => {
    expect((await fetch(`${gateway.url}/ipf/v6`)).status).toBe(200);
  });
});
