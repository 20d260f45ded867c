import { createServer } from 'node:net';
import path from 'node:path';
import type { EngineBypass } from '../envoy/bootstrap/engine-bypass.js';
import {
  type BackendPlan,
  type BootstrapApi,
  type BootstrapPlan,
  type DownstreamTlsPlan,
  type Endpoint,
  type ListenerPlan,
  listenersOf,
  type UpstreamTlsPlan,
} from '../envoy/bootstrap/plan.js';
import type { TracingPlan } from '../envoy/bootstrap/tracing.js';
import type { SidecarPlan } from '../envoy/sidecar.js';
import { apiVersionSelector } from './api-versions.js';
import { ensureDevelopmentCertificate } from './development-certificate.js';
import { backendRulesFor, inboundRulesFor } from './network-rules.js';
import type { ApiConfig, GatewayConfig } from './schema.js';
import { type OtlpConfig, otlpHeaders, otlpTracesUrl, tracedServiceName } from './telemetry-schema.js';

/**
 * The configuration as Envoy, the engine and the service are started with it. A port the configuration leaves to
 * the system (0) stays 0 here: the process that listens on it binds it and reports the port it got (engines, the
 * service, the management server), or Envoy binds it and `up` reads it back; `withBoundPorts` puts them in.
 * Choosing a free port in one process for another to bind later is a race: anything may take it in between.
 */
export interface RuntimePlan extends BootstrapPlan {
  readonly config: GatewayConfig;
}

export interface PlanOptions {
  /** The folder relative file names of the configuration are resolved against (the configuration's). */
  readonly directory?: string;
}

/**
 * The ports `freePort` hands out: below Linux's ephemeral range (32768–60999), where the kernel never puts a bind to
 * port 0. Asking the kernel for a port (bind 0, let go) was racy: the port went back to the ephemeral pool, and an
 * engine, a service or an Envoy listener binding port 0 in the meantime could get it before the process the test
 * wrote it for — `up` then failed with "Address already in use" (a CI run caught it).
 */
const HANDED_OUT = { first: 10_000, last: 32_767 };
/** Each vitest worker (and each other process) hands out its own slice, in order, so no two callers share a port. */
const SLICES = 16;
let nextPort: number | undefined;

/** Whether nothing listens on `port` now: bound once and let go. */
function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * A port that is free now, for a test or a benchmark to write into a configuration before anything runs (nothing of
 * `up` depends on a port staying free; `up` leaves its own to the system). Taken from this process's slice of
 * `HANDED_OUT`, one after another from a random start, skipping any that something listens on.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const size = Math.floor((HANDED_OUT.last - HANDED_OUT.first + 1) / SLICES);
  const slice = Number(process.env.VITEST_POOL_ID ?? process.pid) % SLICES;
  const first = HANDED_OUT.first + slice * size;
  let next = nextPort ?? first + Math.floor(Math.random() * size);
  for (let tried = 0; tried < size; tried += 1) {
    const port: number = first + ((next - first) % size);
    next = port + 1;
    nextPort = next;
    if (await bindable(port, host)) return port;
  }
  throw new Error(`no free port in ${first}–${first + size - 1} on ${host}`);
}

/** The ports processes bound themselves where the plan left them to the system (0). */
export interface BoundPorts {
  /** One per engine, in the order of `engine.endpoints`. */
  readonly engines?: readonly number[];
  readonly service?: number;
  readonly management?: number;
  /** Envoy's, read back from its admin once it runs. */
  readonly envoy?: {
    readonly admin: Endpoint;
    /** By listener name. */
    readonly listeners: ReadonlyMap<string, Endpoint>;
  };
}

/** The plan with the ports its processes bound (the hosts stay the configured ones). */
export function withBoundPorts(plan: RuntimePlan, bound: BoundPorts): RuntimePlan {
  const at = (endpoint: Endpoint, port: number | undefined): Endpoint =>
    port === undefined ? endpoint : { host: endpoint.host, port };
  const listeners = listenersOf(plan);
  const gatewayListener = listeners.find(
    (listener) =>
      listener.role === 'http' &&
      listener.address.host === plan.gateway.host &&
      listener.address.port === plan.gateway.port,
  );
  const envoyPort = (name: string | undefined) =>
    name === undefined ? undefined : bound.envoy?.listeners.get(name)?.port;
  return {
    ...plan,
    gateway: at(plan.gateway, envoyPort(gatewayListener?.name)),
    ...(plan.listeners
      ? {
          listeners: plan.listeners.map((listener) => ({
            ...listener,
            address: at(listener.address, envoyPort(listener.name)),
          })),
        }
      : {}),
    admin: at(plan.admin, bound.envoy?.admin.port),
    engine: {
      ...plan.engine,
      endpoints: plan.engine.endpoints.map((endpoint, index) => at(endpoint, bound.engines?.[index])),
    },
    service: at(plan.service, bound.service),
    ...(plan.management ? { management: at(plan.management, bound.management) } : {}),
  };
}

function endpointOf(endpoint: { host: string; port: number }): Endpoint {
  return { host: endpoint.host, port: endpoint.port };
}

export async function planRuntime(config: GatewayConfig, options: PlanOptions = {}): Promise<RuntimePlan> {
  const directory = options.directory ?? process.cwd();
  const engineEndpoints = config.engine.ports.map((port) => endpointOf({ host: config.engine.host, port }));
  const http = endpointOf(config.gateway.http);
  const tls = config.tls ? await planTls(config.tls, directory) : undefined;
  const placement = await planListeners(config, http);
  return {
    config,
    gateway: placement.gateway,
    ...(placement.listeners ? { listeners: placement.listeners } : {}),
    ...(tls ? { tls } : {}),
    ...(config.tls && hasClientCertificates(config)
      ? { upstreamTls: planUpstreamTls(config.tls, directory, config.backends) }
      : {}),
    admin: endpointOf(config.admin),
    engine: { endpoints: engineEndpoints, messageTimeoutMs: config.engine.messageTimeoutMs },
    service: endpointOf(config.service),
    ...(config.management ? { management: endpointOf(config.management.server) } : {}),
    apis: bootstrapApis(config),
    backends: backendPlans(config.backends, directory),
    trustedProxyHops: config.gateway.trustedProxyHops,
    limits: config.gateway.limits,
    ...(config.telemetry?.otlp ? { tracing: tracingPlan(config.telemetry.otlp) } : {}),
  };
}

/** Envoy's tracer settings from `telemetry.otlp`. */
export function tracingPlan(otlp: OtlpConfig): TracingPlan {
  return {
    tracesUrl: otlpTracesUrl(otlp),
    headers: otlpHeaders(otlp),
    serviceName: tracedServiceName(otlp, 'envoy'),
    samplingRatio: otlp.samplingRatio,
  };
}

/** The APIs as Envoy routes them, each with its engine bypass when it has one. */
export function bootstrapApis(config: GatewayConfig): BootstrapApi[] {
  return config.apis.map((api) => bootstrapApi(config, api));
}

function bootstrapApi(config: GatewayConfig, api: ApiConfig): BootstrapApi {
  const bypass = engineBypass(config, api);
  const sharedBy = apiVersionSelector(config, api) ? api.version?.set : undefined;
  return {
    id: api.id,
    urlSuffix: api.urlSuffix,
    serviceUrl: api.serviceUrl,
    ...(api.hostnames ? { hostnames: api.hostnames } : {}),
    ...(bypass ? { engineBypass: bypass } : {}),
    ...(sharedBy ? { versionSet: sharedBy } : {}),
    ...(api.type === 'websocket' ? { websocket: true } : {}),
  };
}

/**
 * An API whose calls without a subscription key the engine only passes through skips it
 * (envoy/bootstrap/engine-bypass.ts): no policy document at any scope — global, any product containing it, the API,
 * any operation (even one that only says `<base />`: whether a document does something is the engine's to know) —
 * and a call without a key admitted (the API needs no subscription, or an open product contains it). A SOAP API is
 * told by its body: never; nor is a version of a header- or query-versioned set.
 */
export function engineBypass(config: GatewayConfig, api: ApiConfig): EngineBypass | undefined {
  // Without operations every call is the engine's 404.
  if (api.type !== 'http' || api.operations.length === 0) return undefined;
  // Versions that share a URL suffix are told apart by a header or query parameter, which only the engine reads:
  // a route that skipped it would send another version's request (or one naming no version) to this backend.
  if (apiVersionSelector(config, api) !== undefined) return undefined;
  if (config.policy !== undefined || api.policy !== undefined) return undefined;
  if (api.operations.some((operation) => operation.policy !== undefined)) return undefined;
  const products = config.products.filter((product) => product.apis.includes(api.id));
  if (products.some((product) => product.policy !== undefined)) return undefined;
  const open = products.some((product) => !product.subscriptionRequired);
  if (api.subscriptionRequired && !open) return undefined;
  return {
    operations: api.operations.map((operation) => ({
      method: operation.method,
      urlTemplate: operation.urlTemplate,
    })),
    subscriptionKey: { header: api.subscriptionKeyNames.header, query: api.subscriptionKeyNames.query },
  };
}

/**
 * Where each listener binds. Mode none: the configured HTTP address (and the HTTPS one). External: the public
 * listeners on the public address and on the private one (the virtual network reaches the gateway too), the
 * management listener beside them. Internal: everything on the private address only, so nothing answers outside
 * the private network. In both modes every listener enforces the inbound rules of its port.
 */
async function planListeners(
  config: GatewayConfig,
  http: Endpoint,
): Promise<{ gateway: Endpoint; listeners?: ListenerPlan[] }> {
  const network = config.network;
  const httpsPort = config.tls?.port;
  if (network.mode === 'none') {
    const listeners: ListenerPlan[] = [{ name: 'gateway_http', role: 'http', address: http }];
    if (httpsPort !== undefined) {
      const https = endpointOf({ host: config.tls!.host, port: httpsPort });
      listeners.push({ name: 'gateway_https', role: 'https', address: https });
    }
    if (config.management) {
      const address = endpointOf(config.management.listen ?? { host: '127.0.0.1', port: 3443 });
      listeners.push({ name: 'management', role: 'management', address });
    }
    return listeners.length === 1 ? { gateway: http } : { gateway: http, listeners };
  }
  const addresses: [string, string][] =
    network.mode === 'external'
      ? [
          ['public', network.publicAddress!],
          ['private', network.privateAddress!],
        ]
      : [['private', network.privateAddress!]];
  const ports: [ListenerPlan['role'], number][] = [['http', http.port]];
  if (httpsPort !== undefined) ports.push(['https', httpsPort]);
  ports.push(['management', network.managementPort]);
  const listeners: ListenerPlan[] = [];
  for (const [role, port] of ports) {
    const rules = inboundRulesFor(network, port);
    for (const [where, host] of addresses) {
      const name = role === 'management' ? `management_${where}` : `gateway_${role}_${where}`;
      listeners.push({ name, role, address: { host, port }, rules });
    }
  }
  return { gateway: { host: addresses[0]![1], port: http.port }, listeners };
}

async function planTls(
  tls: NonNullable<GatewayConfig['tls']>,
  directory: string,
): Promise<DownstreamTlsPlan> {
  const files =
    tls.certificate && tls.key
      ? {
          certificateFile: path.resolve(directory, tls.certificate),
          keyFile: path.resolve(directory, tls.key),
        }
      : await ensureDevelopmentCertificate(
          path.join(directory, '.portcullis', 'tls'),
          tls.developmentHostnames,
        );
  const clients = tls.clientCertificates;
  return {
    ...files,
    ...(clients
      ? {
          clientCertificates: {
            required: clients.mode === 'required',
            ...(clients.trustedCa ? { trustedCaFile: path.resolve(directory, clients.trustedCa) } : {}),
          },
        }
      : {}),
  };
}

function hasClientCertificates(config: GatewayConfig): boolean {
  return (
    Object.keys(config.tls?.backends ?? {}).length > 0 ||
    config.backends.some((backend) => backend.credentials?.certificateIds?.length)
  );
}

/** Single backends for Envoy's clusters, a backend's own trusted CA file resolved against the file's folder. */
function backendPlans(backends: GatewayConfig['backends'], directory: string): BackendPlan[] {
  return backends.map((backend) => ({
    id: backend.id,
    url: backend.url,
    ...(backend.tls
      ? {
          tls: {
            ...backend.tls,
            trustedCa: backend.tls.trustedCa && path.resolve(directory, backend.tls.trustedCa),
          },
        }
      : {}),
  }));
}

/**
 * The client certificate Envoy presents to each backend: `tls.backends`, then a backend entity's own
 * `credentials.certificateIds` (API Management's way) for one `tls.backends` does not name.
 */
function planUpstreamTls(
  tls: NonNullable<GatewayConfig['tls']>,
  directory: string,
  backends: GatewayConfig['backends'],
): Record<string, UpstreamTlsPlan> {
  const entityCertificates = backends.flatMap((backend) => {
    const certificateId = backend.credentials?.certificateIds?.[0];
    const entry: { certificateId: string; trustedCa?: string; serverName?: string } = {
      certificateId: certificateId ?? '',
    };
    return certificateId === undefined || backend.id in tls.backends ? [] : [[backend.id, entry] as const];
  });
  return Object.fromEntries(
    [...Object.entries(tls.backends), ...entityCertificates].map(([id, backend]) => {
      const certificate = tls.certificates[backend.certificateId]!;
      return [
        id,
        {
          certificateFile: path.resolve(directory, certificate.certificate),
          keyFile: path.resolve(directory, certificate.key),
          ...(backend.trustedCa ? { trustedCaFile: path.resolve(directory, backend.trustedCa) } : {}),
          ...(backend.serverName ? { serverName: backend.serverName } : {}),
        },
      ];
    }),
  );
}

/**
 * The plan with each file Envoy reads for TLS (certificates, keys, CA bundles) replaced by `place(file)`: `up` gives
 * Envoy its copies of the running ones (config/snapshot.ts, withRunningTlsFiles).
 */
export function withTlsFiles(plan: RuntimePlan, place: (file: string) => string): RuntimePlan {
  const trustedCa = (file: string | undefined) => (file === undefined ? {} : { trustedCaFile: place(file) });
  const { tls, upstreamTls, backends } = plan;
  return {
    ...plan,
    ...(backends
      ? {
          backends: backends.map((backend) =>
            backend.tls?.trustedCa === undefined
              ? backend
              : { ...backend, tls: { ...backend.tls, trustedCa: place(backend.tls.trustedCa) } },
          ),
        }
      : {}),
    ...(tls
      ? {
          tls: {
            ...tls,
            certificateFile: place(tls.certificateFile),
            keyFile: place(tls.keyFile),
            ...(tls.clientCertificates
              ? {
                  clientCertificates: {
                    ...tls.clientCertificates,
                    ...trustedCa(tls.clientCertificates.trustedCaFile),
                  },
                }
              : {}),
          },
        }
      : {}),
    ...(upstreamTls
      ? {
          upstreamTls: Object.fromEntries(
            Object.entries(upstreamTls).map(([id, backend]) => [
              id,
              {
                ...backend,
                certificateFile: place(backend.certificateFile),
                keyFile: place(backend.keyFile),
                ...trustedCa(backend.trustedCaFile),
              },
            ]),
          ),
        }
      : {}),
  };
}

export class UnknownSidecarError extends Error {
  override readonly name = 'UnknownSidecarError';
}

/** The sidecar in front of one backend (`network.backends[].backend`). */
export function planSidecar(config: GatewayConfig, backend: string): SidecarPlan {
  const entry = config.network.backends.find((candidate) => candidate.backend === backend);
  if (!entry) {
    const known = config.network.backends.map((candidate) => candidate.backend);
    throw new UnknownSidecarError(
      `no sidecar for "${backend}" in network.backends (known: ${known.join(', ') || 'none'})`,
    );
  }
  return {
    backend: entry.backend,
    listen: entry.listen,
    target: entry.target,
    admin: entry.admin,
    rules: backendRulesFor(config.network, entry),
  };
}
