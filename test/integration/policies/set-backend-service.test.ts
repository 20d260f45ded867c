import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * set-backend-service: base-url to another backend (an undeclared host goes through Envoy's dynamic forward proxy),
 * backend-id naming a configured `backends:` entry (its own cluster), and failures through on-error.
 */
describe('set-backend-service through Envoy', () => {
  let main: EchoBackend;
  let other: EchoBackend;
  let named: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    main = await startEchoBackend();
    other = await startEchoBackend();
    named = await startEchoBackend();
    gateway = await startGateway(
      `backends:
  - { id: reports, url: "${named.url}/reports-v2" }
apis:
${apiYaml('route', `${main.url}/main`, [
  ['base', 'GET', '/by-url/{id}', 'by-url.xml'],
  ['dns', 'GET', '/by-host', 'by-host.xml'],
  ['named', 'GET', '/by-id', 'by-id.xml'],
  ['dynamic', 'GET', '/by-header', 'by-header.xml'],
  ['unknown', 'GET', '/unknown-id', 'unknown.xml'],
  ['plain', 'GET', '/plain', undefined],
])}
`,
      {
        'by-url.xml': policy({ inbound: `<set-backend-service base-url="${other.url}/other" />` }),
        // A host name, not an IP literal: Envoy resolves it at request time.
        'by-host.xml': policy({
          inbound: `<set-backend-service base-url="http://localhost:${other.port}" />`,
        }),
        'by-id.xml': policy({ inbound: '<set-backend-service backend-id="reports" />' }),
        'by-header.xml': policy({
          inbound:
            '<set-backend-service backend-id="@(context.Request.Headers.GetValueOrDefault(&quot;X-Backend&quot;, &quot;reports&quot;))" />',
        }),
        'unknown.xml': policy({ inbound: '<set-backend-service backend-id="nope" />' }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await main?.close();
    await other?.close();
    await named?.close();
  });

  it('without the policy the request goes to the API service URL', async () => {
    expect((await fetch(`${gateway.url}/route/plain?x=1`)).status).toBe(200);
    expect(main.received.at(-1)!.url).toBe('/main/plain?x=1');
    // The engine's routing and timeout headers are Envoy's business, never the backend's.
    const names = Object.keys(main.received.at(-1)!.headers);
    expect(
      names.filter((name) => name.startsWith('x-portcullis-') || name.startsWith('x-envoy-upstream')),
    ).toEqual([]);
  });

  it('base-url sends the operation path and query to another backend under its base path', async () => {
    const before = main.received.length;
    const response = await fetch(`${gateway.url}/route/by-url/9?y=2`);
    expect(response.status).toBe(200);
    const received = other.received.at(-1)!;
    expect(received.url).toBe('/other/by-url/9?y=2');
    expect(received.headers.host).toBe(`127.0.0.1:${other.port}`);
    expect(main.received.length).toBe(before);
  });

  it('a base-url host name is resolved by the dynamic forward proxy, with Host set to it', async () => {
    const response = await fetch(`${gateway.url}/route/by-host`);
    expect(response.status).toBe(200);
    const received = other.received.at(-1)!;
    expect(received.url).toBe('/by-host');
    expect(received.headers.host).toBe(`localhost:${other.port}`);
  });

  it('backend-id routes to the configured backend, under its base path', async () => {
    const response = await fetch(`${gateway.url}/route/by-id?z=3`);
    expect(response.status).toBe(200);
    expect(named.received.at(-1)!.url).toBe('/reports-v2/by-id?z=3');
  });

  it('backend-id from an expression', async () => {
    await fetch(`${gateway.url}/route/by-header`);
    expect(named.received.at(-1)!.url).toBe('/reports-v2/by-header');
  });

  it('an unknown backend-id goes through on-error: 500 with a safe body, no backend called', async () => {
    const counts = [main.received.length, other.received.length, named.received.length];
    const response = await fetch(`${gateway.url}/route/unknown-id`);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ statusCode: 500, message: 'Internal server error' });
    expect([main.received.length, other.received.length, named.received.length]).toEqual(counts);
  });

  it('an expression naming a backend that does not exist is refused the same way', async () => {
    const response = await fetch(`${gateway.url}/route/by-header`, { headers: { 'X-Backend': 'api_route' } });
    expect(response.status).toBe(500);
  });
});
