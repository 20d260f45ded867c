import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedBackend, startScriptedBackend } from '../../doubles/scripted-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * cache-lookup / cache-store as in the spec (§4.3 item 2): duration 120; a hit is served without the backend;
 * with vary-by-header Authorization another Authorization value misses.
 */
describe('cache-lookup and cache-store through Envoy', () => {
  let backend: ScriptedBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startScriptedBackend((request, response, _body, hit) => {
      const path = (request.url ?? '').split('?')[0];
      const status = path === '/api/Failing' ? 500 : 200;
      response
        .writeHead(status, { 'content-type': 'application/json', 'x-backend-hit': String(hit) })
        .end(JSON.stringify({ path: request.url, hit, auth: request.headers.authorization ?? null }));
    });
    const lookup = (children: string, attributes = '') =>
      `<cache-lookup vary-by-developer="false" vary-by-developer-groups="false" downstream-caching-type="none" ${attributes}>${children}</cache-lookup>`;
    const store = '<cache-store duration="120" />';
    gateway = await startGateway(
      `apis:\n${apiYaml('courses', backend.url, [
        ['list', 'GET', '/api/Course', 'plain.xml'],
        ['create', 'POST', '/api/Course', 'plain.xml'],
        ['failing', 'GET', '/api/Failing', 'plain.xml'],
        ['private', 'GET', '/api/Private', 'by-auth.xml'],
      ])}\n`,
      {
        'plain.xml': policy({ inbound: lookup(''), outbound: store }),
        'by-auth.xml': policy({
          inbound: lookup(
            '<vary-by-header>Authorization</vary-by-header>',
            'allow-private-response-caching="true"',
          ),
          outbound: store,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('a second GET is served from the cache without reaching the backend', async () => {
    const first = await fetch(`${gateway.url}/courses/api/Course?page=1`);
    expect(first.status).toBe(200);
    const firstBody = await first.json();
    const second = await fetch(`${gateway.url}/courses/api/Course?page=1`);
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual(firstBody);
    expect(second.headers.get('x-backend-hit')).toBe('1');
    expect(second.headers.get('content-type')).toBe('application/json');
    expect(backend.hits.get('/api/Course')).toBe(1);
  });

  it('another query string is another entry', async () => {
    const before = backend.hits.get('/api/Course') ?? 0;
    await fetch(`${gateway.url}/courses/api/Course?page=2`);
    expect(backend.hits.get('/api/Course')).toBe(before + 1);
  });

  it('only GET is looked up', async () => {
    const before = backend.hits.get('/api/Course') ?? 0;
    await fetch(`${gateway.url}/courses/api/Course?page=1`, { method: 'POST', body: '{}' });
    await fetch(`${gateway.url}/courses/api/Course?page=1`, { method: 'POST', body: '{}' });
    expect(backend.hits.get('/api/Course')).toBe(before + 2);
  });

  it('a response that is not 200 is not stored', async () => {
    await fetch(`${gateway.url}/courses/api/Failing`);
    const again = await fetch(`${gateway.url}/courses/api/Failing`);
    expect(again.status).toBe(500);
    expect(backend.hits.get('/api/Failing')).toBe(2);
  });

  it('vary-by-header Authorization: the same value hits, another value misses', async () => {
    const alice = { Authorization: 'Bearer alice' };
    const first = await fetch(`${gateway.url}/courses/api/Private`, { headers: alice });
    expect(((await first.json()) as { auth: string }).auth).toBe('Bearer alice');
    const again = await fetch(`${gateway.url}/courses/api/Private`, { headers: alice });
    expect(((await again.json()) as { hit: number }).hit).toBe(1);
    expect(backend.hits.get('/api/Private')).toBe(1);

    const bob = await fetch(`${gateway.url}/courses/api/Private`, {
      headers: { Authorization: 'Bearer bob' },
    });
    expect(await bob.json()).toMatchObject({ auth: 'Bearer bob', hit: 2 });
    expect(backend.hits.get('/api/Private')).toBe(2);
  });
});
