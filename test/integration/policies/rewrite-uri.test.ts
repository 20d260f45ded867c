import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { engineTransports } from '../../processes/ext-authz.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** rewrite-uri: template parameters from the matched operation, copy-unmatched-params for the query. */
describe.each(engineTransports)('rewrite-uri through Envoy (%s)', (transport) => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    const rewrite = (attributes: string) => policy({ inbound: `<rewrite-uri ${attributes} />` });
    gateway = await startGateway(
      `apis:\n${apiYaml('shop', `${backend.url}/base`, [
        ['orders', 'GET', '/users/{id}/orders/{orderId}', 'orders.xml'],
        ['search', 'GET', '/search?q={term}', 'search.xml'],
        ['legacy', 'GET', '/legacy?q={term}', 'legacy.xml'],
        ['computed', 'GET', '/computed/{id}', 'computed.xml'],
        ['files', 'GET', '/files/{*path}', 'files.xml'],
        ['everything', 'GET', '/static/*'],
      ])}\n`,
      {
        'orders.xml': rewrite('template="/v2/accounts/{id}/items/{orderId}"'),
        'search.xml': rewrite('template="/find/{term}" copy-unmatched-params="false"'),
        'legacy.xml': rewrite('template="/new?query={term}"'),
        'files.xml': rewrite('template="/storage/{*path}"'),
        'computed.xml': rewrite(
          'template="@(&quot;/by-expression/&quot; + context.Request.MatchedParameters[&quot;id&quot;].ToUpper())"',
        ),
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

  it('fills path parameters and keeps the unmatched query parameters (copy-unmatched-params default true)', async () => {
    const response = await fetch(`${gateway.url}/shop/users/42/orders/7?x=1&y=two`);
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.url).toBe('/base/v2/accounts/42/items/7?x=1&y=two');
  });

  it('copy-unmatched-params="false" drops the query parameters the template does not name', async () => {
    await fetch(`${gateway.url}/shop/search?q=cats&page=2`);
    expect(backend.received.at(-1)!.url).toBe('/base/find/cats');
  });

  it('a query parameter bound by the operation template moves into the new template, the rest are copied', async () => {
    await fetch(`${gateway.url}/shop/legacy?q=dogs&page=3`);
    expect(backend.received.at(-1)!.url).toBe('/base/new?query=dogs&page=3');
  });

  it('encodes parameter values that need it', async () => {
    await fetch(`${gateway.url}/shop/users/a%20b/orders/1`);
    expect(backend.received.at(-1)!.url).toBe('/base/v2/accounts/a%20b/items/1');
  });

  it('takes the whole template from an expression', async () => {
    await fetch(`${gateway.url}/shop/computed/abc`);
    expect(backend.received.at(-1)!.url).toBe('/base/by-expression/ABC');
  });

  it("forwards a wildcard's rest of the path with its slashes, each segment as the client encoded it", async () => {
    await fetch(`${gateway.url}/shop/files/2024/my%20docs/a.txt?v=1`);
    expect(backend.received.at(-1)!.url).toBe('/base/storage/2024/my%20docs/a.txt?v=1');
  });

  it('matches an unnamed wildcard (/static/*) and forwards the path as it came', async () => {
    const response = await fetch(`${gateway.url}/shop/static/css/site.css`);
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.url).toBe('/base/static/css/site.css');
  });
});
