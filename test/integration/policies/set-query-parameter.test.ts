import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { engineTransports } from '../../processes/ext-authz.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** set-query-parameter: the query string the backend receives, for every exists-action. */
describe.each(engineTransports)('set-query-parameter through Envoy (%s)', (transport) => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('qp', backend.url, [['get', 'GET', '/q', 'op.xml']])}\n`,
      {
        'op.xml': policy({
          inbound: `
    <set-query-parameter name="mode" exists-action="override"><value>new</value></set-query-parameter>
    <set-query-parameter name="keep" exists-action="skip"><value>default</value></set-query-parameter>
    <set-query-parameter name="tag" exists-action="append"><value>added</value></set-query-parameter>
    <set-query-parameter name="secret" exists-action="delete" />
    <set-query-parameter name="pair"><value>x</value><value>y</value></set-query-parameter>
    <set-query-parameter name="text"><value>@("a b&amp;c")</value></set-query-parameter>`,
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

  it('overrides, skips, appends, deletes and sets several values', async () => {
    const response = await fetch(`${gateway.url}/qp/q?mode=old&keep=client&tag=first&secret=s3cr3t`);
    expect(response.status).toBe(200);
    const url = new URL(backend.received.at(-1)!.url, 'http://backend');
    expect(url.pathname).toBe('/q');
    expect(url.searchParams.getAll('mode')).toEqual(['new']);
    expect(url.searchParams.getAll('keep')).toEqual(['client']);
    expect(url.searchParams.getAll('tag')).toEqual(['first', 'added']);
    expect(url.searchParams.has('secret')).toBe(false);
    expect(url.searchParams.getAll('pair')).toEqual(['x', 'y']);
    expect(url.searchParams.get('text')).toBe('a b&c');
  });

  it('skip sets a parameter the client did not send', async () => {
    await fetch(`${gateway.url}/qp/q`);
    const url = new URL(backend.received.at(-1)!.url, 'http://backend');
    expect(url.searchParams.get('keep')).toBe('default');
    expect(url.searchParams.getAll('tag')).toEqual(['added']);
  });
});
