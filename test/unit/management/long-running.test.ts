import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../processes/wait.js';
import { type ManagementHarness, startManagement } from './harness.js';

/** A store whose changes "restart Envoy" until released, as GatewayReload does when the bootstrap changes. */
async function restarting(): Promise<{ h: ManagementHarness; release: () => void }> {
  let release = () => {};
  let gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const h = await startManagement(undefined, {
    // Adding the `reports` API adds routes and a cluster: Envoy restarts (and for no other change).
    restarts: (candidate, running) => {
      const adds = (texts: ReadonlyMap<string, string>) =>
        [...texts.values()].some((text) => text.includes('urlSuffix: reports'));
      return adds(candidate) && !adds(running);
    },
    release: async () => {
      await gate;
      gate = Promise.resolve();
    },
  });
  return { h, release: () => release() };
}

async function poll(h: ManagementHarness, location: string, wanted: string) {
  let status: Awaited<ReturnType<ManagementHarness['request']>> | undefined;
  await until(
    async () => {
      status = await h.request('GET', location);
      return status.json?.status === wanted;
    },
    `${location} to reach ${wanted}`,
    { timeoutMs: 2000, everyMs: 20 },
  );
  return status!;
}

describe('changes that restart Envoy: 202 and /operations/{id}', () => {
  let h: ManagementHarness | undefined;
  afterEach(async () => {
    await h?.close();
  });

  it('answers 202 with Location once written, and the operation reaches Succeeded', async () => {
    const started = await restarting();
    h = started.h;
    const accepted = await h.request('PUT', '/apis/reports', {
      body: { urlSuffix: 'reports', serviceUrl: 'http://127.0.0.1:8090' },
    });
    expect(accepted.status).toBe(202);
    const location = accepted.headers.get('location')!;
    expect(location).toMatch(/^\/operations\/[0-9a-f-]{36}$/);
    expect(accepted.json).toEqual({
      id: 'reports',
      urlSuffix: 'reports',
      serviceUrl: 'http://127.0.0.1:8090',
    });
    // Written already; not running until the restart is through.
    expect(await h.read('gateway.yaml')).toContain('urlSuffix: reports');
    expect((await h.request('GET', location)).json).toEqual({ id: location.slice(12), status: 'InProgress' });

    // The next change waits for this one to be applied, then starts from it.
    const next = h.request('PUT', '/backends/after', { body: { url: 'http://127.0.0.1:1' } });
    started.release();
    const done = await poll(h, location, 'Succeeded');
    expect(done.json).toEqual({ id: location.slice(12), status: 'Succeeded', generation: 2 });
    expect((await next).status).toBe(201);
    expect(h.store.running().generation).toBe(3);
    expect((await h.request('GET', '/apis/reports')).status).toBe(200);
  });

  it('answers a change that needs no restart when it is applied, with no operation', async () => {
    h = (await restarting()).h;
    const response = await h.request('PUT', '/backends/plain', { body: { url: 'http://127.0.0.1:1' } });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe('/backends/plain');
  });

  it('answers 404 for an operation it does not know', async () => {
    h = (await restarting()).h;
    const response = await h.request('GET', '/operations/00000000-0000-0000-0000-000000000000');
    expect(response.status).toBe(404);
    expect(response.json.error.code).toBe('ResourceNotFound');
  });
});
