import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { compileGateway } from '../../../src/config/gateway.js';
import { loadConfigFile } from '../../../src/config/load.js';
import { envoyRouteProblems } from '../../../src/engine/backend-routing.js';
import { servicePathPrefixes } from '../../../src/envoy/bootstrap/routes.js';
import { runCli } from '../../processes/cli.js';
import { envoyValidates } from '../../processes/envoy.js';
import {
  type KubernetesObject,
  kubernetesValidator,
  type Manifest,
  manifestsIn,
  renderKustomization,
} from './harness.js';

/**
 * The Kubernetes examples, checked without a cluster and without the network: every object against the Kubernetes
 * and CRD schemas vendored in test/fixtures/k8s-schemas (see the README there), the references between them (a
 * Service selects a Deployment's pods, a route or policy names a Service port that exists), and the gateway file
 * their ConfigMap carries against Portcullis's own loader.
 */
const examples = fileURLToPath(new URL('../../../examples/', import.meta.url));
const validate = kubernetesValidator();

const base = renderKustomization(path.join(examples, 'kubernetes'));
const envoyGateway = manifestsIn(path.join(examples, 'envoy-gateway'));
const istio = manifestsIn(path.join(examples, 'istio'));

const named = (manifests: readonly Manifest[], kind: string, name: string) =>
  manifests.find(({ object }) => object.kind === kind && object.metadata.name === name)?.object;
const schemaErrors = (manifests: readonly Manifest[]) =>
  manifests.flatMap(({ file, object }) =>
    validate(object).map(
      (error) => `${path.relative(examples, file)}: ${object.kind} ${object.metadata?.name}: ${error}`,
    ),
  );
/** A copy of an object, changed by `change`, for the checks that must refuse a broken manifest. */
const broken = (object: KubernetesObject | undefined, change: (copy: any) => void): KubernetesObject => {
  const copy = structuredClone(object!);
  change(copy);
  return copy;
};

describe('the Kubernetes base (examples/kubernetes)', () => {
  it('has the engine, the service, Redis and the backend, each object valid for Kubernetes 1.34', () => {
    expect(base.map(({ object }) => `${object.kind}/${object.metadata.name}`)).toEqual(
      expect.arrayContaining([
        'Deployment/portcullis-engine',
        'Service/portcullis-engine',
        'Deployment/portcullis-service',
        'Service/portcullis-service',
        'Deployment/redis',
        'Service/redis',
        'ConfigMap/portcullis-config',
      ]),
    );
    expect(schemaErrors(base)).toEqual([]);
  });

  it('refuses a broken manifest: an unknown field, a wrong type, a missing required field', () => {
    const engine = named(base, 'Deployment', 'portcullis-engine');
    expect(
      validate(broken(engine, (copy) => (copy.spec.template.spec.containers[0].readinessprobe = {}))),
    ).toEqual(['/spec/template/spec/containers/0: unknown field "readinessprobe"']);
    expect(
      validate(
        broken(engine, (copy) => (copy.spec.template.spec.containers[0].ports[0].containerPort = 'grpc')),
      ),
    ).toContain('/spec/template/spec/containers/0/ports/0/containerPort: must be integer');
    expect(validate(broken(engine, (copy) => delete copy.spec.template.spec.containers[0].name))).toContain(
      "/spec/template/spec/containers/0: must have required property 'name'",
    );
    expect(validate({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } })).toEqual([
      'no schema for v1 Pod: add it to test/fixtures/k8s-schemas/vendor.ts and run it',
    ]);
  });
});

describe('the Envoy Gateway example (examples/envoy-gateway)', () => {
  it('has a Gateway, the routes and the EnvoyExtensionPolicy, each valid for its CRD', () => {
    expect(envoyGateway.map(({ object }) => object.kind)).toEqual(
      expect.arrayContaining(['GatewayClass', 'Gateway', 'HTTPRoute', 'EnvoyExtensionPolicy']),
    );
    expect(schemaErrors(envoyGateway)).toEqual([]);
  });

  it('refuses a broken EnvoyExtensionPolicy: a misspelt field, a value its CRD does not allow', () => {
    const policy = named(envoyGateway, 'EnvoyExtensionPolicy', 'portcullis-engine');
    expect(validate(broken(policy, (copy) => (copy.spec.extproc = copy.spec.extProc)))).toEqual([
      '/spec: unknown field "extproc"',
    ]);
    expect(validate(broken(policy, (copy) => (copy.spec.extProc[0].messageTimeout = '0.5s')))).toEqual([
      '/spec/extProc/0/messageTimeout: must match pattern "^([0-9]{1,5}(h|m|s|ms)){1,4}$"',
    ]);
  });
});

describe('the Istio example (examples/istio)', () => {
  it('has a Gateway, a VirtualService and the EnvoyFilter, each valid for its CRD', () => {
    expect(istio.map(({ object }) => object.kind)).toEqual(
      expect.arrayContaining(['Gateway', 'VirtualService', 'EnvoyFilter']),
    );
    expect(schemaErrors(istio)).toEqual([]);
  });

  it('refuses a broken EnvoyFilter: a misspelt field, a value its CRD does not allow', () => {
    const filter = named(istio, 'EnvoyFilter', 'portcullis-engine');
    expect(
      validate(broken(filter, (copy) => (copy.spec.workloadselector = copy.spec.workloadSelector))),
    ).toEqual(['/spec: unknown field "workloadselector"']);
    expect(validate(broken(filter, (copy) => (copy.spec.configPatches[0].applyTo = 'HTTP_FILTERS')))).toEqual(
      [
        expect.stringMatching(
          /^\/spec\/configPatches\/0\/applyTo: must be equal to one of the allowed values/,
        ),
      ],
    );
  });
});

describe('what the examples refer to', () => {
  const configFiles = () =>
    (named(base, 'ConfigMap', 'portcullis-config') as unknown as { data: Record<string, string> }).data;
  const workDir = mkdtempSync(path.join(tmpdir(), 'portcullis-k8s-'));
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it("the ConfigMap's gateway file, with the policies beside it, passes `portcullis validate`", async () => {
    const config = named(base, 'ConfigMap', 'portcullis-config') as
      | { data: Record<string, string> }
      | undefined;
    for (const [name, content] of Object.entries(config!.data))
      writeFileSync(path.join(workDir, name), content);
    const outcome = await runCli(['validate', path.join(workDir, 'gateway.yaml')]);
    expect(outcome.stderr).toBe('');
    expect(outcome.status).toBe(0);
  });

  it("the engine runs as the Envoy in front routes (by its own routes), and the ConfigMap's policies pass that check", async () => {
    const container = (named(base, 'Deployment', 'portcullis-engine') as any).spec.template.spec
      .containers[0];
    const args: string[] = container.args;
    expect(args[args.indexOf('--backend-routing') + 1]).toBe('envoy-route');
    for (const [name, content] of Object.entries(configFiles()))
      writeFileSync(path.join(workDir, name), content);
    const gateway = compileGateway(await loadConfigFile(path.join(workDir, 'gateway.yaml')));
    expect(envoyRouteProblems(gateway)).toEqual([]);
  });

  it("the ConfigMap's policies are examples/courses/policies, unchanged", () => {
    const config = configFiles();
    const policies = path.join(examples, 'courses', 'policies');
    for (const name of readdirSync(policies))
      expect(config[name], name).toBe(readFileSync(path.join(policies, name), 'utf8'));
  });

  it('the engine and the service read the gateway file from the mounted ConfigMap, on all addresses', () => {
    for (const name of ['portcullis-engine', 'portcullis-service']) {
      const pod = (named(base, 'Deployment', name) as any).spec.template.spec;
      const container = pod.containers[0];
      const mount = container.volumeMounts.find((each: { name: string }) =>
        pod.volumes.some(
          (volume: any) => volume.name === each.name && volume.configMap?.name === 'portcullis-config',
        ),
      );
      const args: string[] = container.args;
      expect(path.dirname(args[args.indexOf('--config') + 1]!), name).toBe(mount.mountPath);
      expect(args[args.indexOf('--host') + 1], name).toBe('0.0.0.0');
      const port = Number(args[args.indexOf('--port') + 1]);
      expect(container.ports.map((each: { containerPort: number }) => each.containerPort)).toContain(port);
    }
  });

  /** Service name → port numbers, of the base's Services whose selector picks a Deployment's pods. */
  const servedPorts = new Map(
    base
      .filter(({ object }) => object.kind === 'Service')
      .map(({ object }) => {
        const spec = (object as any).spec;
        const selected = base.some(({ object: deployment }) => {
          if (deployment.kind !== 'Deployment') return false;
          const labels = (deployment as any).spec.template.metadata.labels;
          return Object.entries(spec.selector).every(([key, value]) => labels[key] === value);
        });
        return [object.metadata.name, selected ? spec.ports.map((port: { port: number }) => port.port) : []];
      }),
  );
  const reaches = (service: string, port: number) => servedPorts.get(service)?.includes(port) ?? false;

  it("every Service selects a Deployment's pods", () => {
    for (const [service, ports] of servedPorts) expect(ports.length, service).toBeGreaterThan(0);
  });

  it('the Envoy Gateway routes and the extension policy name Services and ports of the base', () => {
    const references = envoyGateway.flatMap(({ object }) => {
      const spec = (object as any).spec;
      if (object.kind === 'HTTPRoute') return spec.rules.flatMap((rule: any) => rule.backendRefs);
      if (object.kind === 'EnvoyExtensionPolicy')
        return spec.extProc.flatMap((each: any) => each.backendRefs);
      return [];
    });
    expect(references.length).toBeGreaterThan(0);
    for (const { name, port } of references) expect(reaches(name, port), `${name}:${port}`).toBe(true);
    const policy = named(envoyGateway, 'EnvoyExtensionPolicy', 'portcullis-engine') as any;
    for (const target of policy.spec.targetRefs)
      expect(named(envoyGateway, target.kind, target.name), target.name).toBeDefined();
  });

  it("the Istio routes and the EnvoyFilter's cluster name Services and ports of the base", () => {
    const virtualService = named(istio, 'VirtualService', 'portcullis') as any;
    const destinations = virtualService.spec.http.flatMap((route: any) => route.route);
    for (const { destination } of destinations)
      expect(reaches(destination.host, destination.port.number), destination.host).toBe(true);
    const filter = named(istio, 'EnvoyFilter', 'portcullis-engine') as any;
    const cluster: string =
      filter.spec.configPatches[0].patch.value.typed_config.grpc_service.envoy_grpc.cluster_name;
    const [, port, , host] =
      /^outbound\|(\d+)\|([^|]*)\|([^.]+)\.portcullis\.svc\.cluster\.local$/.exec(cluster) ?? [];
    expect(reaches(host!, Number(port)), cluster).toBe(true);
    const routeNames = virtualService.spec.http.map((route: { name: string }) => route.name);
    expect(routeNames).toContain(filter.spec.configPatches[1].match.routeConfiguration.vhost.route.name);
  });
});

describe('the routes of the Envoy Gateway and Istio examples', () => {
  const gateway = parse(
    readFileSync(path.join(examples, 'kubernetes', 'config', 'gateway.yaml'), 'utf8'),
  ) as {
    apis: Array<{ urlSuffix: string; serviceUrl: string }>;
  };
  const httpRoute = (name: string) => (named(envoyGateway, 'HTTPRoute', name) as any).spec.rules as any[];
  const virtualService = (named(istio, 'VirtualService', 'portcullis') as any).spec.http as any[];

  it("send the Koa service's paths (those of Portcullis's own bootstrap) to the service, without the engine", () => {
    const envoyGatewayPaths = httpRoute('portcullis-service').flatMap((rule) =>
      rule.matches.map((match: any) => match.path.value),
    );
    expect(envoyGatewayPaths.sort()).toEqual([...servicePathPrefixes].sort());
    const serviceRoute = virtualService.find((route) => route.name === 'portcullis-service');
    expect(serviceRoute.match.map((match: any) => match.uri.prefix).sort()).toEqual(
      [...servicePathPrefixes].sort(),
    );
    expect(serviceRoute.route.map((each: any) => each.destination.host)).toEqual(['portcullis-service']);
    const policy = named(envoyGateway, 'EnvoyExtensionPolicy', 'portcullis-engine') as any;
    expect(policy.spec.targetRefs.map((target: { name: string }) => target.name)).toEqual([
      'portcullis-apis',
    ]);
    const filter = named(istio, 'EnvoyFilter', 'portcullis-engine') as any;
    expect(filter.spec.configPatches[1].patch.value.typed_per_filter_config).toEqual({
      'envoy.filters.http.ext_proc': {
        '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute',
        disabled: true,
      },
    });
  });

  it("send each API's URL suffix to its service URL, the suffix taken off", () => {
    for (const api of gateway.apis) {
      const backend = new URL(api.serviceUrl);
      const target = { name: backend.hostname, port: Number(backend.port) };
      const rule = httpRoute('portcullis-apis').find((each) =>
        each.matches.some(
          (match: any) => match.path.type === 'PathPrefix' && match.path.value === `/${api.urlSuffix}`,
        ),
      );
      expect(rule?.backendRefs, api.urlSuffix).toEqual([target]);
      expect(rule.filters[0].urlRewrite.path).toEqual({
        type: 'ReplacePrefixMatch',
        replacePrefixMatch: '/',
      });
      const route = virtualService.find((each) =>
        each.match.some((match: any) => match.uri.prefix === `/${api.urlSuffix}/`),
      );
      expect(
        route?.route.map((each: any) => ({
          name: each.destination.host,
          port: each.destination.port.number,
        })),
        api.urlSuffix,
      ).toEqual([target]);
      expect(route.match).toContainEqual({ uri: { exact: `/${api.urlSuffix}` } });
      expect(route.rewrite).toEqual({ uri: '/' });
    }
  });
});

describe("the Istio EnvoyFilter's Envoy configuration", () => {
  /**
   * A bootstrap with what the EnvoyFilter adds where Istio would put it: its HTTP filter before the router, its route
   * patch merged into the route of that name, the engine's cluster under the name Istio gives it. The CRD leaves the
   * patches' values open; Envoy itself checks them (a misspelt field of ExternalProcessor is refused).
   */
  const bootstrapWith = (filter: any) => {
    const [httpFilter, routePatch] = filter.spec.configPatches.map((patch: any) => patch.patch.value);
    const cluster = httpFilter.typed_config.grpc_service.envoy_grpc.cluster_name;
    const routeName = filter.spec.configPatches[1].match.routeConfiguration.vhost.route.name;
    return {
      static_resources: {
        listeners: [
          {
            name: 'gateway',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            filter_chains: [
              {
                filters: [
                  {
                    name: 'envoy.filters.network.http_connection_manager',
                    typed_config: {
                      '@type':
                        'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                      stat_prefix: 'gateway',
                      route_config: {
                        virtual_hosts: [
                          {
                            name: 'gateway',
                            domains: ['*'],
                            routes: [
                              {
                                name: routeName,
                                match: { prefix: '/v1/' },
                                route: { cluster },
                                ...routePatch,
                              },
                              { name: 'api', match: { prefix: '/' }, route: { cluster } },
                            ],
                          },
                        ],
                      },
                      http_filters: [
                        httpFilter,
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
        clusters: [
          {
            name: cluster,
            type: 'STATIC',
            typed_extension_protocol_options: {
              'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
                '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
                explicit_http_config: { http2_protocol_options: {} },
              },
            },
            load_assignment: {
              cluster_name: cluster,
              endpoints: [
                {
                  lb_endpoints: [
                    {
                      endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 50051 } } },
                    },
                  ],
                },
              ],
            },
          },
        ],
      },
    };
  };
  const filter = named(istio, 'EnvoyFilter', 'portcullis-engine');

  it('is accepted by the real Envoy', async () => {
    expect(await envoyValidates(JSON.stringify(bootstrapWith(filter)), 'envoy.json')).toMatch(/OK/);
  });

  it('a misspelt field in it is refused by Envoy', async () => {
    const misspelt = broken(
      filter,
      (copy) => (copy.spec.configPatches[0].patch.value.typed_config.allow_mode_overide = true),
    );
    await expect(envoyValidates(JSON.stringify(bootstrapWith(misspelt)), 'envoy.json')).rejects.toThrow(
      /allow_mode_overide/,
    );
  });
});
