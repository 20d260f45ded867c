import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { bootstrapObject, bootstrapYaml } from '../../../src/config/envoy.js';
import { parseConfig } from '../../../src/config/load.js';
import { planRuntime } from '../../../src/config/plan.js';
import { managementPaths } from '../../../src/envoy/bootstrap/management.js';
import type { Address } from '../../../src/envoy/config-types.js';
import { type Bootstrap, extensionNamed } from '../../../src/envoy/config-types.js';
import { envoyValidates } from '../../processes/envoy.js';

const hash = `scrypt$16384$8$1$${Buffer.alloc(16, 1).toString('base64url')}$${Buffer.alloc(32, 2).toString('base64url')}`;

const managed = (extra = '') => `
gateway: { http: { host: 127.0.0.1, port: 18080 } }
management:
  listen: { port: 13443 }
  server: { port: 13444 }
  administrators: [{ name: admin, passwordHash: "${hash}" }]
${extra}`;

function listener(bootstrap: Bootstrap, name: string) {
  return bootstrap.static_resources.listeners.find((candidate) => candidate.name === name)!;
}

describe('the management listener', () => {
  it('serves Envoy readiness read-only and everything else from the management API, over TLS when the gateway has it', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-management-'));
    const config = parseConfig(managed('tls: { port: 18443 }'), 'gateway.yaml');
    const plan = await planRuntime(config, { directory });
    const bootstrap = bootstrapObject(plan);
    const management = listener(bootstrap, 'management');
    expect(management.address.socket_address).toEqual({ address: '127.0.0.1', port_value: 13443 });
    const chain = management.filter_chains[0]!;
    expect(chain.transport_socket?.name).toBe('envoy.transport_sockets.tls');
    const manager = extensionNamed(
      chain.filters,
      'envoy.filters.network.http_connection_manager',
    ).typed_config;
    const routes = manager.route_config.virtual_hosts[0]!.routes;
    expect(routes.map((route) => route.match.path ?? route.match.prefix)).toEqual([...managementPaths, '/']);
    expect(routes.at(-1)!.route?.cluster).toBe('portcullis_management');
    // No ext_proc on it: administrators' calls are not API traffic.
    expect(manager.http_filters.map((filter) => filter.name)).toEqual(['envoy.filters.http.router']);
    const cluster = bootstrap.static_resources.clusters.find((c) => c.name === 'portcullis_management')!;
    expect(
      (cluster.load_assignment!.endpoints[0]!.lb_endpoints[0]!.endpoint.address as Address).socket_address,
    ).toEqual({
      address: '127.0.0.1',
      port_value: 13444,
    });
    expect(await envoyValidates(bootstrapYaml(plan))).toContain('OK');
  });

  it('is plain HTTP without TLS, and absent without a management section', async () => {
    const plain = bootstrapObject(await planRuntime(parseConfig(managed(), 'gateway.yaml')));
    expect(listener(plain, 'management').filter_chains[0]!.transport_socket).toBeUndefined();
    const none = bootstrapObject(
      await planRuntime(parseConfig('gateway: { http: { host: 127.0.0.1, port: 18080 } }', 'gateway.yaml')),
    );
    expect(none.static_resources.listeners.map((l) => l.name)).toEqual(['gateway_http']);
    expect(none.static_resources.clusters.map((c) => c.name)).not.toContain('portcullis_management');
  });

  it('refuses a management listener on a gateway port, and `listen` in the placement modes', () => {
    const clash = () =>
      parseConfig(
        `gateway: { http: { port: 13443 } }\nmanagement: { listen: { port: 13443 }, administrators: [{ name: admin, passwordHash: "${hash}" }] }`,
        'gateway.yaml',
      );
    expect(clash).toThrow(ConfigError);
    expect(clash).toThrow(
      /gateway\.yaml:2:\d+: management\.listen\.port: the management listener needs its own port/,
    );
    expect(() => parseConfig(`management: { administrators: [] }`, 'gateway.yaml')).toThrow(
      /management\.administrators: needs at least one administrator/,
    );
    expect(() =>
      parseConfig(`management: { administrators: [{ name: admin, passwordHash: nope }] }`, 'gateway.yaml'),
    ).toThrow(/passwordHash: must look like scrypt/);
  });
});
