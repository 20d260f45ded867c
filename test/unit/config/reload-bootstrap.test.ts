import { describe, expect, it } from 'vitest';
import {
  bootstrapObject,
  envoyArgs,
  hotRestartSharedMemory,
  transitionBootstrap,
} from '../../../src/config/envoy.js';
import { parseConfig } from '../../../src/config/load.js';
import { planRuntime } from '../../../src/config/plan.js';
import type { Bootstrap } from '../../../src/envoy/config-types.js';

const api = (id: string, port: number) =>
  `  - { id: ${id}, urlSuffix: ${id}, serviceUrl: "http://127.0.0.1:${port}", operations: [{ method: GET, urlTemplate: /x }] }`;

async function bootstrapFor(apis: string[]): Promise<Bootstrap> {
  const text = [
    'gateway: { http: { host: 127.0.0.1, port: 18080 } }',
    'engine: { ports: [18081] }',
    'service: { port: 18082 }',
    'apis:',
    ...apis,
    '',
  ].join('\n');
  return bootstrapObject(await planRuntime(parseConfig(text, 'gateway.yaml')));
}

function routeNames(bootstrap: Bootstrap): string[] {
  return [...JSON.stringify(bootstrap).matchAll(/"name":"(api_[a-z]+)","match"/g)].map((match) => match[1]!);
}

function clusterNames(bootstrap: Bootstrap): string[] {
  return bootstrap.static_resources.clusters
    .map((cluster) => cluster.name)
    .filter((name) => name.startsWith('api_'));
}

describe('transitionBootstrap', () => {
  it('leaves out the routes of an added API until the engines know it, and keeps the clusters of both', async () => {
    const before = await bootstrapFor([api('alpha', 9001)]);
    const after = await bootstrapFor([api('alpha', 9001), api('beta', 9002)]);
    const transition = transitionBootstrap(before, after);
    expect(routeNames(transition)).toEqual(['api_alpha']);
    expect(clusterNames(transition)).toEqual(['api_alpha', 'api_beta']);
    // The input is left as it was.
    expect(routeNames(after)).toEqual(['api_alpha', 'api_beta']);
  });

  it('drops the routes of a removed API at once but keeps its cluster for the engines still naming it', async () => {
    const before = await bootstrapFor([api('alpha', 9001), api('beta', 9002)]);
    const after = await bootstrapFor([api('alpha', 9001)]);
    const transition = transitionBootstrap(before, after);
    expect(routeNames(transition)).toEqual(['api_alpha']);
    expect(clusterNames(transition)).toEqual(['api_alpha', 'api_beta']);
  });

  it('is the new bootstrap itself when nothing was added or removed', async () => {
    const before = await bootstrapFor([api('alpha', 9001)]);
    const after = await bootstrapFor([api('alpha', 9003)]);
    expect(transitionBootstrap(before, after)).toEqual(after);
  });
});

describe('envoyArgs with hot restart', () => {
  const options = { concurrency: 2, logLevel: 'warning' };

  it('lets epoch 0 choose a free base id and write it down, and puts later epochs in that family', () => {
    const first = envoyArgs('/b.yaml', options, { epoch: 0, baseIdFile: '/run/base-id' });
    expect(first).toEqual(
      expect.arrayContaining(['--use-dynamic-base-id', '--base-id-path', '/run/base-id']),
    );
    expect(first).not.toContain('--disable-hot-restart');
    expect(first).not.toContain('--restart-epoch');

    const third = envoyArgs('/b.yaml', options, { epoch: 2, baseIdFile: '/run/base-id', baseId: 77 });
    expect(third.join(' ')).toContain(
      '--base-id 77 --restart-epoch 2 --drain-time-s 2 --parent-shutdown-time-s 5',
    );
    expect(() => envoyArgs('/b.yaml', options, { epoch: 1, baseIdFile: '/run/base-id' })).toThrow(
      'epoch 1 needs the base id of epoch 0',
    );
  });

  it('keeps hot restart off without a family', () => {
    expect(envoyArgs('/b.yaml', options)).toContain('--disable-hot-restart');
  });

  it('names the shared memory segment Envoy keeps for a base id', () => {
    expect(hotRestartSharedMemory(216925500)).toBe('/dev/shm/envoy_shared_memory_2169255000');
  });
});
