import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePort } from '../../src/config/plan.js';
import { type EchoBackend, startEchoBackend } from '../doubles/echo-backend.js';
import { startUp, type UpRun } from '../processes/up.js';
import { until } from '../processes/wait.js';

/** An API policy that marks every answer with `x-generation: <mark>`, so a test sees when a reload applied. */
const marking = (mark: string) =>
  `<policies><inbound><base /></inbound><backend><base /></backend><outbound><base /><set-header name="x-generation" exists-action="override"><value>${mark}</value></set-header></outbound><on-error><base /></on-error></policies>`;

const inbound = (statements: string, outbound = '') =>
  `<policies><inbound><base />${statements}</inbound><backend><base /></backend><outbound><base />${outbound}</outbound><on-error><base /></on-error></policies>`;

const QUOTA = 5;
const RATE = 3;

/**
 * Issue 15 through `portcullis up` with `state.dataDir` and no Redis: the engine's quota counters and rate-limit
 * windows outlive up itself (the embedded store), and its caches and windows outlive a policy reload and an
 * Envoy hot restart (they live outside the compiled configuration).
 */
describe('portcullis up keeps the engine state', () => {
  let run: UpRun;
  let backend: EchoBackend;
  let directory: string;
  let configFile: string;
  let ports: { gateway: number; admin: number };
  const url = (operation: string) => `http://127.0.0.1:${ports.gateway}/metered/api/${operation}`;
  const get = async (operation: string) => {
    const response = await fetch(url(operation));
    await response.arrayBuffer();
    return response;
  };
  const backendHits = (operation: string) =>
    backend.received.filter((request) => request.url === `/api/${operation}`).length;

  const config = (apis: string[]) =>
    stringify({
      gateway: { http: { host: '127.0.0.1', port: ports.gateway } },
      admin: { host: '127.0.0.1', port: ports.admin },
      state: { dataDir: 'state' },
      apis: apis.map((id) => ({
        id,
        urlSuffix: id,
        serviceUrl: backend.url,
        policy: 'api.xml',
        operations: [
          { id: 'quota', method: 'GET', urlTemplate: '/api/Quota', policy: 'quota.xml' },
          { id: 'limited', method: 'GET', urlTemplate: '/api/Limited', policy: 'limited.xml' },
          { id: 'cached', method: 'GET', urlTemplate: '/api/Cached', policy: 'cached.xml' },
          { id: 'plain', method: 'GET', urlTemplate: '/api/Plain' },
        ],
      })),
    });

  beforeAll(async () => {
    backend = await startEchoBackend();
    ports = { gateway: await freePort(), admin: await freePort() };
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-durable-'));
    configFile = path.join(directory, 'gateway.yaml');
    await writeFile(path.join(directory, 'api.xml'), marking('one'));
    await writeFile(
      path.join(directory, 'quota.xml'),
      inbound(`<quota-by-key calls="${QUOTA}" renewal-period="2592000" counter-key="everyone" />`),
    );
    await writeFile(
      path.join(directory, 'limited.xml'),
      inbound(`<rate-limit-by-key calls="${RATE}" renewal-period="300" counter-key="everyone" />`),
    );
    await writeFile(
      path.join(directory, 'cached.xml'),
      inbound(
        '<cache-lookup vary-by-developer="false" vary-by-developer-groups="false" />',
        '<cache-store duration="3600" />',
      ),
    );
    await writeFile(configFile, config(['metered']));
    run = startUp(configFile);
    await run.waitFor('Press Ctrl-C to stop.');
  }, 60_000);

  afterAll(async () => {
    await run?.stop();
    await backend?.close();
    if (directory) await rm(directory, { recursive: true, force: true });
  }, 30_000);

  /** The cache entry is still served without the backend, and the rate-limit window is still full. */
  const expectStateKept = async () => {
    const hits = backendHits('Cached');
    expect((await get('Cached')).status).toBe(200);
    expect(backendHits('Cached')).toBe(hits);
    const refused = await get('Limited');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(200);
  };

  it('fills a cache entry, a rate-limit window and part of a quota', async () => {
    for (let i = 0; i < QUOTA - 2; i++) expect((await get('Quota')).status).toBe(200);
    for (let i = 0; i < RATE; i++) expect((await get('Limited')).status).toBe(200);
    expect((await get('Limited')).status).toBe(429);
    expect((await get('Cached')).status).toBe(200);
    expect((await get('Cached')).status).toBe(200);
    expect(backendHits('Cached')).toBe(1);
    expect(existsSync(path.join(directory, 'state', 'data.mdb'))).toBe(true);
  });

  it('keeps the cache entry and the rate-limit window across a policy reload', async () => {
    await writeFile(path.join(directory, 'api.xml'), marking('two'));
    await until(
      async () => (await get('Plain')).headers.get('x-generation') === 'two',
      'the edited policy to apply',
      15_000,
    );
    await expectStateKept();
  }, 30_000);

  it('keeps them across a change of Envoy (an API added: Envoy updated in place)', async () => {
    await writeFile(configFile, config(['metered', 'more']));
    await until(
      () => run.output().includes('configuration reloaded (Envoy updated in place)'),
      'the update of Envoy',
      30_000,
    );
    await until(
      async () => (await fetch(`http://127.0.0.1:${ports.gateway}/more/api/Plain`)).status === 200,
      'the added API',
      15_000,
    );
    await expectStateKept();
  }, 45_000);

  it('admits exactly the quota across a restart of up, and keeps the rate-limit window', async () => {
    expect(await run.stop()).toBe(0);
    run = startUp(configFile);
    await run.waitFor('Press Ctrl-C to stop.');
    expect((await get('Quota')).status).toBe(200);
    expect((await get('Quota')).status).toBe(200);
    const refused = await get('Quota');
    expect(refused.status).toBe(403);
    expect((await get('Limited')).status).toBe(429);
  }, 60_000);
});
