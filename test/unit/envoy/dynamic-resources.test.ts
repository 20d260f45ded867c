import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { planRuntime } from '../../../src/config/plan.js';
import { buildBootstrap } from '../../../src/envoy/bootstrap/bootstrap.js';
import {
  type DynamicGateway,
  dynamicGateway,
  resourceFileText,
} from '../../../src/envoy/bootstrap/dynamic-resources.js';

/**
 * The bootstrap `up` runs takes listeners, routes and clusters from files (dynamic-resources.ts). What matters: an
 * API added or removed changes route and cluster files only — the listener file stays byte for byte the same, so
 * Envoy leaves the listener and its connections alone (a listener that changes is replaced and its connections
 * drained) — and what stays in the bootstrap does not depend on the APIs at all.
 */

const directory = '/run/portcullis/envoy-1';

const withPolicy = (id: string) =>
  `  - { id: ${id}, urlSuffix: ${id}, serviceUrl: "http://127.0.0.1:9001", policy: "<policies><inbound><base /></inbound></policies>", operations: [{ method: GET, urlTemplate: /x }] }`;
/** No policy anywhere and no key needed: Envoy serves it without the engine (engine-bypass.ts). */
const policyLess = (id: string) =>
  `  - { id: ${id}, urlSuffix: ${id}, serviceUrl: "http://127.0.0.1:9002", subscriptionRequired: false, operations: [{ method: GET, urlTemplate: /x }] }`;

async function gatewayWith(
  apis: readonly string[],
  gatewayLine = 'gateway: { http: { host: 127.0.0.1, port: 18080 } }',
): Promise<DynamicGateway> {
  const text = [
    gatewayLine,
    'admin: { host: 127.0.0.1, port: 19901 }',
    'engine: { ports: [18081] }',
    'service: { port: 18082 }',
    ...(apis.length > 0 ? ['apis:', ...apis] : []),
    '',
  ].join('\n');
  return dynamicGateway(buildBootstrap(await planRuntime(parseConfig(text, 'gateway.yaml'))), directory);
}

const textOf = (gateway: DynamicGateway, kind: string) =>
  gateway.resources
    .filter((file) => file.kind === kind)
    .map(resourceFileText)
    .join('');

describe('dynamicGateway', () => {
  it('keeps only the admin, runtime and overload manager in the bootstrap, and points at one watched folder per file', async () => {
    const gateway = await gatewayWith([withPolicy('alpha')]);
    expect(Object.keys(gateway.bootstrap).sort()).toEqual([
      'admin',
      'dynamic_resources',
      'layered_runtime',
      'node',
      'overload_manager',
    ]);
    expect(gateway.bootstrap.dynamic_resources.lds_config).toEqual({
      resource_api_version: 'V3',
      path_config_source: {
        path: `${directory}/listeners/listeners.json`,
        watched_directory: { path: `${directory}/listeners` },
      },
    });
    expect(gateway.resources.map((file) => `${file.kind} ${file.file}`)).toEqual([
      `clusters ${directory}/clusters/clusters.json`,
      `routes ${directory}/routes-gateway_http_gateway/routes.json`,
      `listeners ${directory}/listeners/listeners.json`,
    ]);
    // The listener names its routes; the route configuration carries that name.
    const listener = JSON.parse(textOf(gateway, 'listeners')).resources[0];
    const manager = listener.filter_chains[0].filters.at(-1).typed_config;
    expect(manager.route_config).toBeUndefined();
    expect(manager.rds).toEqual({
      route_config_name: 'gateway_http_gateway',
      config_source: {
        resource_api_version: 'V3',
        path_config_source: {
          path: `${directory}/routes-gateway_http_gateway/routes.json`,
          watched_directory: { path: `${directory}/routes-gateway_http_gateway` },
        },
      },
    });
    expect(JSON.parse(textOf(gateway, 'routes')).resources[0]).toMatchObject({
      '@type': 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
      name: 'gateway_http_gateway',
    });
  });

  it('changes routes and clusters, never the listeners or the bootstrap, when APIs come and go (a policy-less one too)', async () => {
    const one = await gatewayWith([withPolicy('alpha')]);
    for (const other of [
      await gatewayWith([withPolicy('alpha'), withPolicy('beta')]),
      await gatewayWith([withPolicy('alpha'), policyLess('open')]),
      await gatewayWith([]),
    ]) {
      expect(textOf(other, 'listeners')).toBe(textOf(one, 'listeners'));
      expect(other.bootstrap).toEqual(one.bootstrap);
      expect(textOf(other, 'routes')).not.toBe(textOf(one, 'routes'));
      expect(textOf(other, 'clusters')).not.toBe(textOf(one, 'clusters'));
    }
  });

  it('writes the same file for the same resources (its version is its content), and another for others', async () => {
    const [first, again, changed] = [
      await gatewayWith([withPolicy('alpha')]),
      await gatewayWith([withPolicy('alpha')]),
      await gatewayWith([withPolicy('beta')]),
    ];
    expect(first.resources.map(resourceFileText)).toEqual(again.resources.map(resourceFileText));
    const version = (gateway: DynamicGateway) => gateway.resources[0]!.document.version_info;
    expect(version(changed)).not.toBe(version(first));
    expect(version(first)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('changes the listener file when a listener itself changes (the trusted proxy hops of its connection manager)', async () => {
    const plain = await gatewayWith([withPolicy('alpha')]);
    const trusting = await gatewayWith(
      [withPolicy('alpha')],
      'gateway: { http: { host: 127.0.0.1, port: 18080 }, trustedProxyHops: 1 }',
    );
    expect(textOf(trusting, 'listeners')).not.toBe(textOf(plain, 'listeners'));
  });
});
