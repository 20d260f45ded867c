import { describe, expect, it } from 'vitest';
import { bootstrapYaml } from '../../../src/config/envoy.js';
import { parseConfig } from '../../../src/config/load.js';
import { planRuntime } from '../../../src/config/plan.js';
import { buildBootstrap } from '../../../src/envoy/bootstrap/bootstrap.js';
import type { BootstrapPlan } from '../../../src/envoy/bootstrap/plan.js';
import type { Address } from '../../../src/envoy/config-types.js';
import { extensionNamed } from '../../../src/envoy/config-types.js';
import { envoyValidates } from '../../processes/envoy.js';

const plan: BootstrapPlan = {
  gateway: { host: '0.0.0.0', port: 8080 },
  admin: { host: '127.0.0.1', port: 9901 },
  engine: {
    endpoints: [
      { host: '127.0.0.1', port: 50051 },
      { host: '127.0.0.1', port: 50052 },
    ],
    messageTimeoutMs: 500,
  },
  service: { host: '127.0.0.1', port: 3000 },
  apis: [
    { id: 'courses', urlSuffix: 'courses', serviceUrl: 'http://127.0.0.1:8081' },
    {
      id: 'remote',
      urlSuffix: 'v1/remote',
      serviceUrl: 'https://api.example.com/base/',
      hostnames: ['api.example.org'],
    },
  ],
};

/** The gateway listener's HTTP connection manager. */
function gatewayConnectionManager() {
  const [listener] = buildBootstrap(plan).static_resources.listeners;
  return extensionNamed(listener!.filter_chains[0]!.filters, 'envoy.filters.network.http_connection_manager')
    .typed_config;
}

describe('the generated Envoy bootstrap', () => {
  it('is accepted by the real Envoy (--mode validate), for plain, TLS and host-bound APIs', async () => {
    expect(await envoyValidates(bootstrapYaml({ ...plan, config: parseConfig('', 'x') }))).toContain('OK');
  });

  it('is accepted for the bundled example as `portcullis envoy-config` prints it', async () => {
    const config = parseConfig(
      await import('node:fs/promises').then((fs) => fs.readFile('examples/courses/gateway.yaml', 'utf8')),
      'gateway.yaml',
    );
    expect(await envoyValidates(bootstrapYaml(await planRuntime(config)))).toContain('OK');
  });

  it('fails closed, asks only for request headers by default and lets the engine override per request', () => {
    const hcm = gatewayConnectionManager();
    const matched = extensionNamed(hcm.http_filters, 'envoy.filters.http.ext_proc').typed_config;
    // Inside the match delegate that skips it on the response path (http-filters.ts).
    if (!('extension_config' in matched)) throw new Error('ext_proc is not inside its match delegate');
    const extProc = matched.extension_config.typed_config;
    expect(extProc.failure_mode_allow).toBe(false);
    expect(extProc.allow_mode_override).toBe(true);
    expect(extProc.message_timeout).toBe('0.5s');
    // Slow policy work may extend Envoy's wait up to the stream idle timeout (300 s by default), no further.
    expect(extProc.max_message_timeout).toBe('300s');
    expect(extProc.max_message_timeout).toBe(hcm.stream_idle_timeout);
    expect(extProc.processing_mode).toMatchObject({
      request_header_mode: 'SEND',
      response_header_mode: 'SKIP',
      request_body_mode: 'NONE',
      response_body_mode: 'NONE',
    });
    // The header-mutation filter is there without a policy-less API too: the listener does not depend on the APIs.
    expect(hcm.http_filters.map((filter) => filter.name)).toEqual([
      'envoy.filters.http.ext_proc',
      'envoy.filters.http.header_mutation',
      'envoy.filters.http.dynamic_forward_proxy',
      'envoy.filters.http.router',
    ]);
  });

  it('lists every engine process as an endpoint of the engine cluster, over HTTP/2', () => {
    const engine = buildBootstrap(plan).static_resources.clusters.find(
      (cluster) => cluster.name === 'portcullis_engine',
    )!;
    const ports = engine.load_assignment!.endpoints[0]!.lb_endpoints.map(
      (entry) => (entry.endpoint.address as Address).socket_address.port_value,
    );
    expect(ports).toEqual([50051, 50052]);
    expect(
      engine.typed_extension_protocol_options!['envoy.extensions.upstreams.http.v3.HttpProtocolOptions']
        .explicit_http_config,
    ).toHaveProperty('http2_protocol_options');
  });

  it('routes the service paths to the Koa service on every host, ahead of the APIs', () => {
    const hosts = gatewayConnectionManager().route_config.virtual_hosts;
    expect(hosts.map((host) => host.domains)).toEqual([['*'], ['api.example.org', 'api.example.org:*']]);
    for (const host of hosts) {
      const serviceRoutes = host.routes.filter((route) => route.route?.cluster === 'portcullis_service');
      const matched = serviceRoutes.map((route) => route.match.path_separated_prefix ?? route.match.prefix);
      expect(matched).toEqual(
        expect.arrayContaining([
          '/v1/mcp',
          '/v1/authorize',
          '/v1/token',
          '/v1/register',
          '/.well-known/oauth-authorization-server',
        ]),
      );
      // The engine's backend-selection route comes first, then the service, then the APIs, then 404.
      expect(host.routes[0]!.name).toBe('engine_selected_backend');
      expect(host.routes.at(-1)!.direct_response?.status).toBe(404);
    }
  });
});

describe('Envoy tracing (telemetry.otlp)', () => {
  it('traces the gateway listeners with the OpenTelemetry tracer to the collector, accepted by the real Envoy', async () => {
    const config = parseConfig(
      [
        'telemetry:',
        '  otlp:',
        '    endpoint: https://collector.example.com:4318',
        '    headers: { x-api-key: secret-1 }',
        '    samplingRatio: 0.25',
      ].join('\n'),
      'gateway.yaml',
    );
    const runtime = await planRuntime(config);
    const bootstrap = buildBootstrap(runtime);
    const [listener] = bootstrap.static_resources.listeners;
    const hcm = extensionNamed(
      listener!.filter_chains[0]!.filters,
      'envoy.filters.network.http_connection_manager',
    ).typed_config;
    expect(hcm.tracing).toMatchObject({
      random_sampling: { value: 25 },
      spawn_upstream_span: true,
      provider: {
        name: 'envoy.tracers.opentelemetry',
        typed_config: {
          service_name: 'portcullis-envoy',
          http_service: {
            http_uri: {
              uri: 'https://collector.example.com:4318/v1/traces',
              cluster: 'portcullis_otlp_collector',
            },
            request_headers_to_add: [{ header: { key: 'x-api-key', value: 'secret-1' } }],
          },
        },
      },
    });
    const collector = bootstrap.static_resources.clusters.find(
      (cluster) => cluster.name === 'portcullis_otlp_collector',
    );
    expect(collector?.transport_socket).toBeDefined();
    expect(await envoyValidates(bootstrapYaml(runtime))).toContain('OK');
  });

  it('is absent without telemetry.otlp', () => {
    expect(gatewayConnectionManager().tracing).toBeUndefined();
  });
});
