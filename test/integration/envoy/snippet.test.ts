import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import { planRuntime } from '../../../src/config/plan.js';
import { buildEnvoySnippet } from '../../../src/envoy/snippet.js';
import { runCli } from '../../processes/cli.js';
import { envoyValidates } from '../../processes/envoy.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));

const config = parseConfig(
  `
service: { port: 3000 }
backends: [{ id: bulk, url: "http://10.0.0.5:8080" }]
apis:
  - { id: courses, urlSuffix: courses, serviceUrl: "http://10.0.0.4:8081" }
`,
  'gateway.yaml',
);

async function snippetFor(socketPath?: string) {
  const plan = await planRuntime(config);
  return buildEnvoySnippet(socketPath ? { ...plan, engine: { ...plan.engine, socketPath } } : plan);
}

/** An operator's Envoy: one listener, one virtual host with its own route named for the API, plus the snippet. */
function operatorsEnvoy(snippet: Awaited<ReturnType<typeof snippetFor>>) {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 9901 } } },
    static_resources: {
      listeners: [
        {
          name: 'mine',
          address: { socket_address: { address: '127.0.0.1', port_value: 10000 } },
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.http_connection_manager',
                  typed_config: {
                    '@type':
                      'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                    stat_prefix: 'mine',
                    route_config: {
                      virtual_hosts: [
                        {
                          name: 'mine',
                          domains: ['*'],
                          routes: [
                            ...snippet.routes,
                            {
                              name: 'portcullis:courses',
                              match: { prefix: '/courses' },
                              route: { cluster: 'api_courses' },
                            },
                          ],
                        },
                      ],
                    },
                    http_filters: [
                      ...snippet.http_filters,
                      {
                        name: 'envoy.filters.http.router',
                        typed_config: {
                          '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router',
                        },
                      },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: snippet.clusters,
    },
  };
}

describe('envoy-config --snippet', () => {
  it('gives the ext_proc filter the route name the engine maps APIs by, and a socket engine cluster', async () => {
    const snippet = await snippetFor('/run/portcullis/engine.sock');
    const extProc = snippet.http_filters[0]!.typed_config as unknown as { request_attributes: string[] };
    expect(extProc.request_attributes).toContain('xds.route_name');
    expect(snippet.routes.map((route) => route.name)).toEqual([
      'engine_selected_backend',
      'service_v1_mcp',
      'service_v1_authorize',
      'service_v1_token',
      'service_v1_register',
      'service_v1_introspect',
      'service_v1_jwks',
      'service_well_known_oauth_authorization_server',
      'service_well_known_oauth_protected_resource',
    ]);
    expect(snippet.clusters.map((cluster) => cluster.name)).toEqual([
      'portcullis_engine',
      'portcullis_service',
      'api_courses',
      'backend_bulk',
      'dynamic_http',
      'dynamic_https',
    ]);
    expect(snippet.clusters[0]!.load_assignment!.endpoints[0]!.lb_endpoints).toEqual([
      { endpoint: { address: { pipe: { path: '/run/portcullis/engine.sock' } } } },
    ]);
  });

  it.each([
    ['TCP', undefined],
    ['a Unix domain socket', '/run/portcullis/engine.sock'],
  ])(
    'pasted into an Envoy of its own, with the engine on %s, passes envoy --mode validate',
    async (_, socket) => {
      const output = await envoyValidates(stringify(operatorsEnvoy(await snippetFor(socket))));
      expect(output).toContain('OK');
    },
  );

  it('prints paste-ready YAML (no anchors) from the CLI', async () => {
    const outcome = await runCli([
      'envoy-config',
      '--config',
      path.join(root, 'examples', 'courses', 'gateway.yaml'),
      '--snippet',
      '--engine-socket',
      '/run/portcullis/engine.sock',
    ]);
    expect(outcome.stderr).toBe('');
    expect(outcome.status).toBe(0);
    expect(outcome.stdout).not.toMatch(/[&*]a\d/);
    expect(Object.keys(parse(outcome.stdout))).toEqual(['http_filters', 'routes', 'clusters']);
  });

  it('matches what examples/sidecar/envoy.yaml pasted (the hand-written example does not drift from it)', async () => {
    const values = { LISTEN_PORT: '8080', ADMIN_PORT: '9901', SERVICE_PORT: '8090', BACKEND_PORT: '8081' };
    const fill = (text: string) =>
      text.replace(/\$\{([A-Z_]+)\}/g, (_whole, name: string) =>
        name === 'ENGINE_SOCKET' ? '/run/engine.sock' : values[name as keyof typeof values]!,
      );
    const gatewayYaml = fill(await readFile(path.join(root, 'examples', 'sidecar', 'gateway.yaml'), 'utf8'));
    const plan = await planRuntime(parseConfig(gatewayYaml, 'gateway.yaml'));
    const snippet = buildEnvoySnippet({
      ...plan,
      engine: { ...plan.engine, socketPath: '/run/engine.sock' },
    });
    const example = parse(fill(await readFile(path.join(root, 'examples', 'sidecar', 'envoy.yaml'), 'utf8')));
    const manager = example.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
    const exampleRoutes = manager.route_config.virtual_hosts[0].routes;
    for (const route of snippet.routes)
      expect(
        exampleRoutes.find((r: { name: string }) => r.name === route.name),
        route.name,
      ).toEqual(JSON.parse(JSON.stringify(route)));
    expect(manager.http_filters[0]).toEqual(JSON.parse(JSON.stringify(snippet.http_filters[0])));
    for (const cluster of snippet.clusters.filter((c) => !c.name.startsWith('dynamic_'))) {
      const pasted = example.static_resources.clusters.find((c: { name: string }) => c.name === cluster.name);
      expect(pasted, cluster.name).toBeDefined();
    }
  });
});
