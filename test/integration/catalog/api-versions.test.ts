import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { runCli } from '../../processes/cli.js';
import { type GatewayStack, startGateway, startGatewayForFile } from '../../processes/gateway.js';

/**
 * API Management's Header and Query versioning through the real Envoy and engine: the versions of one set share a
 * URL suffix, the request's header or query parameter picks one, each runs its own policies against its own
 * backend. No version named: the Original version (""), else 404; a version the set does not have: 404. The header
 * and the query parameter reach the backend, as API Management forwards them.
 */
const notFound = { statusCode: 404, message: 'Resource not found' };
const streamsStarted = 'http.ingress_http.ext_proc.streams_started';
const served = (name: string) =>
  `<policies><inbound><base /><set-header name="x-served-by" exists-action="override"><value>${name}</value></set-header></inbound><backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error></policies>`;

describe('header- and query-versioned APIs on one URL suffix', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    // The Original version has no policy and needs no key: alone, it would skip the engine on a route of its own,
    // which would take v2's requests too.
    gateway = await startGateway(
      `
versionSets:
  - { id: orders, scheme: header, header: Api-Version }
  - { id: stock, scheme: query, query: api-version }
apis:
  - id: orders
    urlSuffix: orders
    serviceUrl: ${backend.url}/orders-original
    version: { set: orders, name: "" }
    operations: [{ method: GET, urlTemplate: /items }]
  - id: orders-v2
    urlSuffix: orders
    serviceUrl: ${backend.url}/orders-v2
    version: { set: orders, name: v2 }
    policy: orders-v2.xml
    operations:
      - { method: GET, urlTemplate: /items }
      - { method: POST, urlTemplate: /items }
  - id: stock-2024
    urlSuffix: stock
    serviceUrl: ${backend.url}/stock-2024
    version: { set: stock, name: 2024-01-01 }
    policy: stock-2024.xml
    operations: [{ method: GET, urlTemplate: /items }]
  - id: stock-2025
    urlSuffix: stock
    serviceUrl: ${backend.url}/stock-2025
    version: { set: stock, name: 2025-01-01 }
    policy: stock-2025.xml
    operations: [{ method: GET, urlTemplate: /items }]
`,
      {
        'orders-v2.xml': served('orders-v2'),
        'stock-2024.xml': served('stock-2024'),
        'stock-2025.xml': served('stock-2025'),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  const streams = async () => (await gateway.envoy.stats('ext_proc')).get(streamsStarted) ?? 0;

  it('picks the version the header names, with its policy and backend; none named: the Original, through the engine', async () => {
    const before = await streams();
    const original = await fetch(`${gateway.url}/orders/items`);
    expect(original.status).toBe(200);
    let seen = backend.received.at(-1)!;
    expect(seen.url).toBe('/orders-original/items');
    expect(seen.headers['x-served-by']).toBeUndefined();
    expect(await streams()).toBe(before + 1);

    // The Original's operation, asked of v2: v2's backend and policy.
    expect((await fetch(`${gateway.url}/orders/items`, { headers: { 'Api-Version': 'v2' } })).status).toBe(
      200,
    );
    expect(backend.received.at(-1)!).toMatchObject({
      url: '/orders-v2/items',
      headers: { 'x-served-by': 'orders-v2' },
    });

    const v2 = await fetch(`${gateway.url}/orders/items`, {
      method: 'POST',
      headers: { 'Api-Version': 'v2' },
    });
    expect(v2.status).toBe(200);
    seen = backend.received.at(-1)!;
    expect(seen).toMatchObject({ method: 'POST', url: '/orders-v2/items' });
    expect(seen.headers['x-served-by']).toBe('orders-v2');
    expect(seen.headers['api-version']).toBe('v2');

    // POST is v2's alone: the Original answers 404 for it.
    expect((await fetch(`${gateway.url}/orders/items`, { method: 'POST' })).status).toBe(404);
  });

  it('picks the version the query parameter names and forwards the parameter', async () => {
    for (const [version, base] of [
      ['2024-01-01', 'stock-2024'],
      ['2025-01-01', 'stock-2025'],
    ] as const) {
      const response = await fetch(`${gateway.url}/stock/items?page=2&api-version=${version}`);
      expect(response.status).toBe(200);
      const seen = backend.received.at(-1)!;
      expect(seen.url).toBe(`/${base}/items?page=2&api-version=${version}`);
      expect(seen.headers['x-served-by']).toBe(base);
    }
  });

  it('answers 404 Resource not found for a version the set does not have, or none without an Original', async () => {
    const before = backend.received.length;
    for (const [url, init] of [
      ['/orders/items', { headers: { 'Api-Version': 'v9' } }],
      ['/stock/items', {}],
      ['/stock/items?api-version=1999-01-01', {}],
      // The header does not name a query-versioned API's version.
      ['/stock/items', { headers: { 'api-version': '2025-01-01' } }],
    ] as const) {
      const response = await fetch(`${gateway.url}${url}`, init);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual(notFound);
    }
    expect(backend.received.length).toBe(before);
  });
});

const fixture = fileURLToPath(new URL('../../fixtures/apiops/header-query-versions', import.meta.url));
const configOf = (file: string) => parseConfig(readFileSync(file, 'utf8'), 'gateway.yaml');

describe('portcullis import apiops: Header and Query version sets', () => {
  let work: string;
  let backend: EchoBackend;
  let gateway: GatewayStack | undefined;
  let imported: string;

  beforeAll(async () => {
    backend = await startEchoBackend();
    work = mkdtempSync(path.join(tmpdir(), 'portcullis-apiops-versions-'));
    const artifacts = path.join(work, 'artifacts');
    cpSync(fixture, artifacts, { recursive: true });
    const overrides = path.join(work, 'configuration.test.yaml');
    const apis = ['orders', 'orders-v2', 'stock-2024-01-01', 'stock-2025-01-01'];
    writeFileSync(
      overrides,
      `apis:\n${apis.map((name) => `  - name: ${name}\n    properties: { serviceUrl: "${backend.url}/${name}" }\n`).join('')}`,
    );
    imported = path.join(work, 'imported', 'gateway.yaml');
    const outcome = await runCli([
      'import',
      'apiops',
      artifacts,
      '--config',
      imported,
      '--overrides',
      overrides,
    ]);
    expect(outcome.stderr).not.toContain('version sets/');
    expect(outcome.stdout).toMatch(/wrote .*gateway\.yaml: 4 APIs/);
    expect(outcome.status).toBe(0);
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('serves each version with its own policy, by header and by query', async () => {
    gateway = await startGatewayForFile(imported);
    const cases = [
      ['/orders/items', {}, 'orders'],
      ['/orders/items', { headers: { 'Api-Version': 'v2' } }, 'orders-v2'],
      ['/stock/items?api-version=2024-01-01', {}, 'stock-2024-01-01'],
      ['/stock/items?api-version=2025-01-01', {}, 'stock-2025-01-01'],
    ] as const;
    for (const [url, init, api] of cases) {
      const response = await fetch(`${gateway.url}${url}`, init);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-api-version')).toBe(api);
      const seen = backend.received.at(-1)!;
      expect(seen.url.startsWith(`/${api}/items`)).toBe(true);
      expect(seen.headers['x-served-by']).toBe(api);
    }
    expect((await fetch(`${gateway.url}/stock/items`)).status).toBe(404);
  });

  it('import → export → import gives the same configuration', async () => {
    const exported = path.join(work, 'exported');
    expect((await runCli(['export', 'apiops', exported, '--config', imported])).status).toBe(0);
    const set = JSON.parse(
      readFileSync(path.join(exported, 'version sets/orders-versions/versionSetInformation.json'), 'utf8'),
    );
    expect(set.properties).toMatchObject({ versioningScheme: 'Header', versionHeaderName: 'Api-Version' });
    const again = path.join(work, 'again', 'gateway.yaml');
    expect((await runCli(['import', 'apiops', exported, '--config', again])).status).toBe(0);
    expect(configOf(again)).toEqual(configOf(imported));
  });
});
