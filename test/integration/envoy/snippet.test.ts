import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import { freePort, planRuntime } from '../../../src/config/plan.js';
import { buildEnvoySnippet } from '../../../src/envoy/snippet.js';
import { startEchoBackend } from '../../doubles/echo-backend.js';
import { scratchFolder } from '../../fixtures/scratch.js';
import { type RunningChild, startChild } from '../../processes/child.js';
import { runCli } from '../../processes/cli.js';
import { envoyValidates, type RunningEnvoy, startEnvoyWith } from '../../processes/envoy.js';
import { until } from '../../processes/wait.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'bin', 'portcullis.js');

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
function operatorsEnvoy(
  snippet: Awaited<ReturnType<typeof snippetFor>>,
  ports: { readonly admin: number; readonly listener: number } = { admin: 9901, listener: 10000 },
) {
  return {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: ports.admin } } },
    static_resources: {
      listeners: [
        {
          name: 'mine',
          address: { socket_address: { address: '127.0.0.1', port_value: ports.listener } },
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
      '--service-url',
      'http://127.0.0.1:8090',
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

  describe('with the engine on TCP, as docs/your-own-envoy.md runs it', () => {
    const scratch = scratchFolder('snippet');
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it('points the engine cluster at --engine-port, and an Envoy of its own serves the API through that engine', async () => {
      const backend = await startEchoBackend();
      cleanups.push(() => backend.close());
      // What a user writes: no engine or service section (both default to port 0, any free port).
      const file = scratch.write(
        'gateway.yaml',
        [
          'apis:',
          `  - { id: courses, urlSuffix: courses, serviceUrl: "${backend.url}", operations: [{ method: GET, urlTemplate: /api/Course }], policy: courses.xml }`,
        ].join('\n'),
      );
      scratch.write(
        'courses.xml',
        '<policies><inbound><base /><set-header name="x-through" exists-action="override"><value>engine</value></set-header></inbound><backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error></policies>',
      );
      const enginePort = await freePort();
      const engine: RunningChild = await startChild(
        process.execPath,
        [cli, 'engine', '--config', file, '--port', String(enginePort)],
        { what: 'portcullis engine --port', ready: (output) => output.includes('engine listening on') },
      );
      cleanups.push(() => engine.stop());

      const outcome = await runCli([
        'envoy-config',
        '--config',
        file,
        '--snippet',
        '--engine-port',
        String(enginePort),
        '--service-url',
        'http://127.0.0.1:8090',
      ]);
      expect(outcome.stderr).toBe('');
      expect(outcome.status).toBe(0);
      const snippet = parse(outcome.stdout) as Awaited<ReturnType<typeof snippetFor>>;
      expect(JSON.stringify(snippet.clusters)).not.toContain('"port_value":0');

      const ports = { admin: await freePort(), listener: await freePort() };
      const envoy: RunningEnvoy = await startEnvoyWith(operatorsEnvoy(snippet, ports), {
        admin: { host: '127.0.0.1', port: ports.admin },
        gateway: { host: '127.0.0.1', port: ports.listener },
      });
      cleanups.push(() => envoy.stop());
      await until(
        async () =>
          (await envoy.stats('portcullis_engine.membership_healthy')).get(
            'cluster.portcullis_engine.membership_healthy',
          ) === 1,
        'Envoy to find the engine healthy on its port',
        { timeoutMs: 10_000, detail: () => `${envoy.log()}\n${engine.output()}` },
      );
      const response = await fetch(`http://127.0.0.1:${ports.listener}/courses/api/Course`);
      expect(response.status, await response.clone().text()).toBe(200);
      await response.text();
      expect(backend.received.at(-1)).toMatchObject({
        url: '/api/Course',
        headers: { 'x-through': 'engine' },
      });
    }, 60_000);

    it.each([
      [[], /engine\.ports in .*defaults\.yaml is 0 .*--engine-port PORT/],
      [['--engine-port', '50051'], /service\.port in .*defaults\.yaml is 0 .*--service-url URL/],
      [
        ['--engine-port', '0', '--service-url', 'http://127.0.0.1:8090'],
        /--engine-port must be a port number from 1 to 65535, got "0"/,
      ],
    ])('refuses to print a port 0 (with %j), naming the flag and the setting', async (flags, message) => {
      const file = scratch.write(
        'defaults.yaml',
        'apis: [{ id: courses, urlSuffix: courses, serviceUrl: "http://10.0.0.4:8081" }]\n',
      );
      const outcome = await runCli(['envoy-config', '--config', file, '--snippet', ...flags]);
      expect(outcome.stdout).toBe('');
      expect(outcome.stderr).toMatch(message);
      expect(outcome.status).toBe(1);
    });
  });
});
