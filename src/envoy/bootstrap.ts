/**
 * Builds Envoy's static bootstrap for a gateway. Pure data in, a typed plain object out (config-types.ts; printed as
 * YAML by the CLI), so tests can assert on it and `envoy --mode validate` can check it.
 */

import type {
  Address,
  Bootstrap,
  Cluster,
  DnsCacheConfig,
  DnsLookupFamily,
  DownstreamTransportSocket,
  Duration,
  DynamicForwardProxyFilter,
  ExtProcFilter,
  HeaderMutationFilter,
  HttpConnectionManagerFilter,
  HttpFilter,
  Listener,
  LocalReplyConfig,
  NetworkFilter,
  NetworkRbacFilter,
  PerFilterConfig,
  RbacOnMatch,
  RbacPredicate,
  Route,
  RouteAction,
  RouterFilter,
  UpstreamTransportSocket,
  VirtualHost,
} from './config-types.js';
import {
  apiClusterName,
  backendClusterName,
  backendSelectionHeader,
  dynamicClusterName,
  engineClusterName,
  maxMessageTimeoutMs,
  requestAttributes,
  responseAttributes,
  serviceClusterName,
  setClientAddress,
  upstreamTimeoutHeader,
} from './contract.js';
import {
  bypassFilterConfig,
  bypassMatches,
  bypassRequestHeaders,
  type EngineBypass,
} from './engine-bypass.js';
import { adminClusterName, managementClusterName, managementConnectionManager } from './management.js';
import { collectorCluster, connectionManagerTracing, type TracingPlan } from './tracing.js';

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

export interface BootstrapApi {
  readonly id: string;
  readonly urlSuffix: string;
  readonly serviceUrl: string;
  readonly hostnames?: readonly string[];
  /** Set when the engine would only pass this API's requests through: they skip it (engine-bypass.ts). */
  readonly engineBypass?: EngineBypass;
  /**
   * The header- or query-versioned set this API is a version of: its versions share the URL suffix, and only the
   * engine, which reads the version, picks among them. They get one route, through the engine, and no bypass.
   */
  readonly versionSet?: string;
}

/** A rule of a listener's inbound access list (network security group style): the first that matches decides. */
export interface AccessRule {
  readonly name: string;
  readonly priority: number;
  readonly access: 'allow' | 'deny';
  /** `prefixes` with `negate` means every address outside them (the Internet tag). */
  readonly source:
    | { readonly kind: 'any' }
    | { readonly kind: 'prefixes'; readonly prefixes: readonly string[]; readonly negate: boolean };
}

/**
 * One listening socket. `http` and `https` carry the gateway's routes (with ext_proc); `management` answers
 * Envoy's readiness and statistics, read-only, from the admin listener, and the management API (envoy/management.ts).
 */
export interface ListenerPlan {
  readonly name: string;
  readonly role: 'http' | 'https' | 'management';
  readonly address: Endpoint;
  /** Evaluated in order, first match wins, no match refuses; absent: every source is accepted. */
  readonly rules?: readonly AccessRule[];
}

/** TLS of the https listeners. Files are absolute paths (Envoy reads them). */
export interface DownstreamTlsPlan {
  readonly certificateFile: string;
  readonly keyFile: string;
  /** Downstream mTLS: ask for a client certificate. */
  readonly clientCertificates?: {
    /** Refuse a handshake without a certificate. */
    readonly required: boolean;
    /**
     * The CAs Envoy names in its certificate request. Chain problems never fail the handshake: the policy
     * (validate-client-certificate) decides, as API Management lets it.
     */
    readonly trustedCaFile?: string;
  };
}

/** The client certificate Envoy presents to one backend (authentication-certificate). */
export interface UpstreamTlsPlan {
  readonly certificateFile: string;
  readonly keyFile: string;
  /** CA of the backend's server certificate; the system store when absent. */
  readonly trustedCaFile?: string;
  /** SNI and the name its certificate must carry; the URL's host when absent. */
  readonly serverName?: string;
}

/**
 * How much Envoy holds for one client and how long it waits for one. Set deliberately because Envoy's defaults
 * interact badly with a buffered body: see `defaultGatewayLimits`.
 */
export interface GatewayLimits {
  /**
   * The largest request body a policy that reads the body gets (the route's `request_body_buffer_limit`, the same
   * for HTTP/1 and HTTP/2). A larger body is refused with 413 while it is being buffered; an operation whose
   * policies do not read the body streams any size to the backend.
   */
  readonly maxRequestBodyBytes: number;
  /** What Envoy reads and buffers per client connection (`per_connection_buffer_limit_bytes` of the listeners). */
  readonly connectionBufferBytes: number;
  /** A request on which nothing moved for this long is ended (408 or reset): the HCM's `stream_idle_timeout`. */
  readonly streamIdleTimeoutMs: number;
  /**
   * The whole request must have arrived within this, unless its response has begun (408 otherwise): the HCM's
   * `request_timeout`. 0: no deadline.
   */
  readonly requestTimeoutMs: number;
}

/**
 * 1 MiB is Envoy's own per-connection default, so a body that a policy could read before still can. The largest
 * values the schema allows keep one buffered body (plus one connection buffer of slack) well under the 16 MiB gRPC
 * message that carries it to the engine. 300 s is Envoy's default idle timeout. Envoy sets no request deadline by
 * default, so a client that trickles a byte now and then holds a request (and, for a body a policy reads, a buffer)
 * for as long as it likes; 60 s is ample for a body of the largest size a policy may read on a slow link.
 */
export const defaultGatewayLimits: GatewayLimits = Object.freeze({
  maxRequestBodyBytes: 1024 * 1024,
  connectionBufferBytes: 1024 * 1024,
  streamIdleTimeoutMs: 300_000,
  requestTimeoutMs: 60_000,
});

export interface BootstrapPlan {
  /** The plain HTTP listener, used alone when `listeners` is absent (and the address `up` prints). */
  readonly gateway: Endpoint;
  /** Every listener, when placement or TLS asks for more than the one plain HTTP listener. */
  readonly listeners?: readonly ListenerPlan[];
  readonly tls?: DownstreamTlsPlan;
  /** By API id or named backend id: the client certificate its cluster presents. */
  readonly upstreamTls?: Readonly<Record<string, UpstreamTlsPlan>>;
  readonly admin: Endpoint;
  readonly engine: {
    readonly endpoints: readonly Endpoint[];
    readonly messageTimeoutMs: number;
    /** The engine's Unix domain socket (`portcullis engine --socket`), used instead of `endpoints`. */
    readonly socketPath?: string;
  };
  readonly service: Endpoint;
  /** Where the management API is served (`up`), behind the management listener; absent: no management API. */
  readonly management?: Endpoint;
  readonly apis: readonly BootstrapApi[];
  /** Named backends (`set-backend-service backend-id`), each its own cluster. */
  readonly backends?: readonly { readonly id: string; readonly url: string }[];
  /**
   * Proxies in front of the gateway listeners whose X-Forwarded-For entries are trusted (Envoy's
   * `xff_num_trusted_hops`); 0 (absent): the client is the TCP peer.
   */
  readonly trustedProxyHops?: number;
  /** Absent: `defaultGatewayLimits`. */
  readonly limits?: GatewayLimits;
  /** Envoy's OpenTelemetry tracer on the gateway listeners (tracing.ts); absent: no tracing, no cost. */
  readonly tracing?: TracingPlan;
}

/**
 * Paths the Koa service answers, on every host (issuer and base URL may be two hosts; both are origins without a
 * path). Each is matched as a path-separated prefix (`/v1/authorize` covers `/v1/authorize/login` and
 * `/v1/authorize/consent`, `/v1/register` covers RFC 7592's `/v1/register/<client_id>`, `/v1/mcp` covers
 * `/v1/mcp/`, and the well-known names cover their path-inserted forms). Nothing else reaches the service.
 */
export const servicePathPrefixes = [
  '/v1/mcp',
  '/v1/authorize',
  '/v1/token',
  '/v1/register',
  '/v1/introspect',
  '/v1/jwks',
  '/.well-known/oauth-authorization-server',
  '/.well-known/oauth-protected-resource',
] as const;

export const hcmStatPrefix = 'ingress_http';
const extProcFilterName = 'envoy.filters.http.ext_proc';

/** The API Management answer for a URL that matches no API. */
const notFoundBody = '{ "statusCode": 404, "message": "Resource not found" }';

const systemCaFile = '/etc/ssl/certs/ca-certificates.crt';

const dnsCacheConfig: DnsCacheConfig = {
  name: 'portcullis_dynamic_backends',
  dns_lookup_family: 'V4_PREFERRED',
};

export function buildBootstrap(plan: BootstrapPlan): Bootstrap {
  return {
    node: { id: 'portcullis', cluster: 'portcullis' },
    admin: { address: socketAddress(plan.admin) },
    layered_runtime: {
      layers: [
        {
          name: 'portcullis',
          static_layer: {
            // Close each ext_proc stream with a half-close and let the engine finish it with OK, instead of a
            // half-close followed by RST_STREAM: a reset per request trips Node's HTTP/2 reset-rate limit (1000 at
            // once, 33 a second), which drops the whole connection and fails every stream on it. The engine ends
            // each stream itself once it has answered the last phase; a stream Envoy half-closes first belongs to
            // a filter that is gone, and the engine writes nothing to it (a status reaching such a stream can crash
            // Envoy 1.40: README, Security, "Request bodies"), so Envoy resets it after its remote-close timeout.
            'envoy.reloadable_features.ext_proc_graceful_grpc_close': false,
            // The routes that skip the engine match an API's operations with one regex per method (engine-bypass.ts);
            // Envoy's default bound on a regex's compiled size (100) refuses any but the smallest API.
            're2.max_program_size.error_level': 100_000,
          },
        },
      ],
    },
    // Keep the overload manager quiet about the missing downstream connection limit, and bound it.
    overload_manager: {
      resource_monitors: [
        {
          name: 'envoy.resource_monitors.global_downstream_max_connections',
          typed_config: {
            '@type':
              'type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig',
            max_active_downstream_connections: 50_000,
          },
        },
      ],
    },
    static_resources: {
      listeners: listenersOf(plan).map((listener) => buildListener(plan, listener)),
      clusters: [
        ...gatewayClusters(plan),
        ...(listenersOf(plan).some((listener) => listener.role === 'management')
          ? [staticCluster(adminClusterName, plan.admin)]
          : []),
        ...(plan.management ? [staticCluster(managementClusterName, plan.management)] : []),
        ...(plan.tracing ? [collectorCluster(plan.tracing, urlCluster)] : []),
      ],
    },
  };
}

/**
 * The clusters the engine's answers route to and the processes behind Envoy: the engine, the service, each API's
 * and named backend's, the dynamic forward proxy's. The generated bootstrap and the snippet for an operator's Envoy
 * both carry exactly these.
 */
export function gatewayClusters(plan: BootstrapPlan): Cluster[] {
  return [
    engineCluster(plan),
    serviceCluster(plan),
    ...plan.apis.map((api) => urlCluster(apiClusterName(api.id), api.serviceUrl, plan.upstreamTls?.[api.id])),
    ...(plan.backends ?? []).map((backend) =>
      urlCluster(backendClusterName(backend.id), backend.url, plan.upstreamTls?.[backend.id]),
    ),
    dynamicCluster(false),
    dynamicCluster(true),
  ];
}

/** The listeners of a plan: the one plain HTTP listener when the plan names none. */
export function listenersOf(plan: BootstrapPlan): readonly ListenerPlan[] {
  return plan.listeners ?? [{ name: 'gateway_http', role: 'http', address: plan.gateway }];
}

function buildListener(plan: BootstrapPlan, listener: ListenerPlan): Listener {
  const filters: NetworkFilter[] = [];
  if (listener.rules) filters.push(rbacFilter(`inbound_${listener.name}.`, listener.rules));
  filters.push(
    listener.role === 'management'
      ? managementConnectionManager(plan.management, routerFilter())
      : gatewayConnectionManager(plan, listener),
  );
  const transportSocket = listenerTls(plan, listener);
  return {
    name: listener.name,
    address: socketAddress(listener.address),
    per_connection_buffer_limit_bytes: limitsOf(plan).connectionBufferBytes,
    filter_chains: [{ filters, ...(transportSocket ? { transport_socket: transportSocket } : {}) }],
  };
}

function listenerTls(plan: BootstrapPlan, listener: ListenerPlan): DownstreamTransportSocket | undefined {
  if (listener.role === 'https') {
    if (!plan.tls) throw new TypeError(`listener ${listener.name} is https but the plan has no tls`);
    return downstreamTls(plan.tls);
  }
  if (listener.role === 'management' && plan.tls && plan.management) {
    // Administrators' credentials travel on it: TLS with the gateway's certificate whenever there is one (the
    // gateway's client-certificate settings are the APIs', not the administrators').
    return downstreamTls({ certificateFile: plan.tls.certificateFile, keyFile: plan.tls.keyFile });
  }
  return undefined;
}

function limitsOf(plan: BootstrapPlan): GatewayLimits {
  return plan.limits ?? defaultGatewayLimits;
}

function gatewayConnectionManager(plan: BootstrapPlan, listener: ListenerPlan): HttpConnectionManagerFilter {
  return {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type':
        'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
      stat_prefix: hcmStatPrefix,
      codec_type: 'AUTO',
      stream_idle_timeout: seconds(limitsOf(plan).streamIdleTimeoutMs),
      request_timeout: seconds(limitsOf(plan).requestTimeoutMs),
      // The engine assigns request ids (kept when the client sent one), so every log line agrees.
      generate_request_id: false,
      // An edge gateway trusts the TCP peer, not a client-supplied X-Forwarded-For; behind trusted proxies, the
      // entry the nearest one appended (the client address the engine's source.address and the service see).
      use_remote_address: true,
      // One path for everyone (Envoy's edge best practices): dot-segments, `%2e` dots and `\` resolved, slashes
      // merged, before the engine matches the operation and before the router forwards, so the backend resolves
      // the path the policy was chosen for. The engine normalises the same way (src/catalog/request-path.ts).
      normalize_path: true,
      merge_slashes: true,
      // An encoded slash is data (RFC 3986): kept as the client wrote it, matched as part of its segment and
      // forwarded once-encoded. Unescaping would merge two different resources into one (a `{name}` holding "a/b");
      // the engine refuses the one dangerous use, a dot-segment behind an encoded slash (`..%2F`).
      path_with_escaped_slashes_action: 'KEEP_UNCHANGED',
      xff_num_trusted_hops: plan.trustedProxyHops ?? 0,
      // A client-sent X-Forwarded-Client-Cert is dropped: policies get the certificate from the TLS connection
      // itself (ext_proc attributes), never from a header a client could forge.
      forward_client_cert_details: 'SANITIZE',
      ...(listener.role === 'https'
        ? { scheme_header_transformation: { scheme_to_overwrite: 'https' } }
        : {}),
      route_config: { name: 'gateway', virtual_hosts: virtualHosts(plan) },
      local_reply_config: backendFailureReplies(),
      http_filters: gatewayHttpFilters(plan),
      ...(plan.tracing ? { tracing: connectionManagerTracing(plan.tracing) } : {}),
    },
  };
}

function downstreamTls(tls: DownstreamTlsPlan): DownstreamTransportSocket {
  const clients = tls.clientCertificates;
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
      common_tls_context: {
        tls_certificates: [
          { certificate_chain: { filename: tls.certificateFile }, private_key: { filename: tls.keyFile } },
        ],
        alpn_protocols: ['h2', 'http/1.1'],
        // A validation context makes Envoy request a client certificate. Untrusted chains are let through so the
        // policy sees them and decides (validate-client-certificate's validate-trust), as API Management does.
        ...(clients
          ? {
              validation_context: {
                ...(clients.trustedCaFile ? { trusted_ca: { filename: clients.trustedCaFile } } : {}),
                trust_chain_verification: 'ACCEPT_UNTRUSTED',
              },
            }
          : {}),
      },
      ...(clients ? { require_client_certificate: clients.required } : {}),
    },
  };
}

/**
 * An RBAC network filter that behaves as a network security group: the rules, already in priority order, are a
 * matcher list (the first matching rule decides, allow or deny) and a connection no rule matches is refused.
 * Counters: `<statPrefix>rbac.allowed` / `rbac.denied`.
 */
export function rbacFilter(statPrefix: string, rules: readonly AccessRule[]): NetworkRbacFilter {
  const action = (name: string, access: 'allow' | 'deny'): RbacOnMatch => ({
    action: {
      name,
      typed_config: {
        '@type': 'type.googleapis.com/envoy.config.rbac.v3.Action',
        name,
        action: access === 'allow' ? 'ALLOW' : 'DENY',
      },
    },
  });
  return {
    name: 'envoy.filters.network.rbac',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC',
      stat_prefix: statPrefix,
      matcher: {
        matcher_list: {
          matchers: rules.map((rule) => ({
            predicate: sourcePredicate(rule.source),
            on_match: action(`${rule.priority}_${rule.name}`, rule.access),
          })),
        },
        on_no_match: action('no_rule_matched', 'deny'),
      },
    },
  };
}

function sourcePredicate(source: AccessRule['source']): RbacPredicate {
  const prefixes = source.kind === 'any' ? ['0.0.0.0/0', '::/0'] : source.prefixes;
  const single: RbacPredicate = {
    single_predicate: {
      input: {
        name: 'envoy.matching.inputs.source_ip',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.matching.common_inputs.network.v3.SourceIPInput',
        },
      },
      custom_match: {
        name: 'envoy.matching.matchers.ip',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.matching.input_matchers.ip.v3.Ip',
          stat_prefix: 'source_ip',
          cidr_ranges: prefixes.map((prefix) => {
            const [address, length] = prefix.split('/');
            return { address_prefix: address, prefix_len: Number(length) };
          }),
        },
      },
    },
  };
  return source.kind === 'prefixes' && source.negate ? { not_matcher: single } : single;
}

/**
 * Envoy's own answers when the backend cannot be reached or times out say why in plain text ("upstream connect
 * error … Connection refused"). Without an on-error section the client gets API Management's default error
 * instead: 502 / 504 with a JSON body that names no internals. The engine still sees the reason
 * (`response.code_details`) and runs on-error when the operation has one.
 */
function backendFailureReplies(): LocalReplyConfig {
  const reply = (flags: readonly string[], status: number): LocalReplyConfig['mappers'][number] => ({
    filter: { response_flag_filter: { flags } },
    status_code: status,
    body: { inline_string: JSON.stringify({ statusCode: status, message: 'Internal server error' }) },
    body_format_override: {
      text_format_source: { inline_string: '%LOCAL_REPLY_BODY%' },
      content_type: 'application/json; charset=utf-8',
    },
  });
  return {
    mappers: [
      // UF connection failure, UH no healthy host, URX retries exhausted, UR remote reset, UC connection closed.
      reply(['UF', 'UH', 'URX', 'UR', 'UC'], 502),
      // UT: the router's timeout (forward-request's).
      reply(['UT'], 504),
    ],
  };
}

export function extProcFilter(
  plan: BootstrapPlan,
  /** Attributes sent besides the engine's own (an Envoy Portcullis did not configure names its routes). */
  extraRequestAttributes: readonly string[] = [],
): ExtProcFilter {
  return {
    name: extProcFilterName,
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor',
      grpc_service: { envoy_grpc: { cluster_name: engineClusterName } },
      // Fail closed: a request the engine could not see must not reach a backend unchecked.
      failure_mode_allow: false,
      message_timeout: seconds(plan.engine.messageTimeoutMs),
      // Slow policy work asks for more (override_message_timeout) up to this; see maxMessageTimeoutMs.
      max_message_timeout: seconds(maxMessageTimeoutMs(limitsOf(plan))),
      // Request headers only by default; the engine asks per request for what its pipeline needs.
      allow_mode_override: true,
      processing_mode: {
        request_header_mode: 'SEND',
        response_header_mode: 'SKIP',
        request_body_mode: 'NONE',
        response_body_mode: 'NONE',
        request_trailer_mode: 'SKIP',
        response_trailer_mode: 'SKIP',
      },
      request_attributes: [...Object.values(requestAttributes), ...extraRequestAttributes],
      response_attributes: Object.values(responseAttributes),
      // :method and :authority are routing headers: set-method and base URLs need them.
      mutation_rules: {
        allow_all_routing: true,
        allow_expression: { regex: `^${escapeRegex(upstreamTimeoutHeader)}$` },
        disallow_is_error: true,
      },
    },
  };
}

function gatewayHttpFilters(plan: BootstrapPlan): HttpFilter[] {
  // The header mutation filter strips internal headers where ext_proc is skipped; without such a route it would
  // only cost a lookup per request.
  const bypass = plan.apis.some((api) => api.engineBypass !== undefined);
  return [
    extProcFilter(plan),
    ...(bypass ? [headerMutationFilter()] : []),
    dynamicForwardProxyFilter(),
    routerFilter(),
  ];
}

function headerMutationFilter(): HeaderMutationFilter {
  return {
    name: 'envoy.filters.http.header_mutation',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation',
    },
  };
}

export function dynamicForwardProxyFilter(): DynamicForwardProxyFilter {
  return {
    name: 'envoy.filters.http.dynamic_forward_proxy',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.dynamic_forward_proxy.v3.FilterConfig',
      dns_cache_config: dnsCacheConfig,
    },
  };
}

function routerFilter(): RouterFilter {
  return {
    name: 'envoy.filters.http.router',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router',
      suppress_envoy_headers: true,
    },
  };
}

const extProcDisabled: PerFilterConfig = {
  [extProcFilterName]: {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute',
    disabled: true,
  },
};

function virtualHosts(plan: BootstrapPlan): VirtualHost[] {
  // One virtual host per distinct host set; APIs without hostnames live on the catch-all host.
  const hostSets = new Map<string, BootstrapApi[]>();
  for (const api of plan.apis) {
    const key = api.hostnames ? [...api.hostnames].sort().join(',') : '*';
    hostSets.set(key, [...(hostSets.get(key) ?? []), api]);
  }
  if (!hostSets.has('*')) hostSets.set('*', []);
  return [...hostSets.entries()].map(([key, apis]) => ({
    name: key === '*' ? 'any_host' : `hosts_${key.replace(/[^A-Za-z0-9]+/g, '_')}`,
    domains: key === '*' ? ['*'] : key.split(',').flatMap((host) => [host, `${host}:*`]),
    // On every route of the host, including the one the engine's backend choice re-selects, so the limit a body
    // is buffered against does not change when the route does; and the same for HTTP/1 and HTTP/2 clients (HTTP/2
    // would otherwise buffer up to its stream window, 256 MiB).
    request_body_buffer_limit: limitsOf(plan).maxRequestBodyBytes,
    routes: [
      backendSelectionRoute(),
      ...serviceRoutes(),
      // A route that skips the engine must not take a request of an API with a longer suffix (`v1/courses` under
      // `v1`); the engine itself tries longer suffixes first.
      ...[...apis]
        .sort((a, b) => b.urlSuffix.length - a.urlSuffix.length)
        .filter(firstOfVersionSet())
        .flatMap(apiRoutes),
      notFoundRoute(),
    ],
  }));
}

/**
 * After the engine ran, the request carries the backend cluster in a header and its final `:path`; this route
 * sends it there. A client that sends the header itself also lands here first, but ext_proc runs on this route
 * and the engine strips the client's copy before the route is picked again.
 */
export function backendSelectionRoute(): Route {
  return {
    name: 'engine_selected_backend',
    match: { prefix: '/', headers: [{ name: backendSelectionHeader, present_match: true }] },
    route: { cluster_header: backendSelectionHeader, timeout: '30s', auto_host_rewrite: true },
    request_headers_to_remove: [backendSelectionHeader],
  };
}

export function serviceRoutes(): Route[] {
  return servicePathPrefixes.map<Route>((prefix) => ({
    name: `service${prefix.replace(/[^A-Za-z0-9]+/g, '_')}`,
    match: prefix.endsWith('/') ? { prefix } : { path_separated_prefix: prefix },
    // The MCP endpoint keeps server-sent-event streams open (GET, list_changed): no overall deadline there, only
    // an idle one; every other service path answers within a minute.
    route:
      prefix === '/v1/mcp'
        ? { cluster: serviceClusterName, timeout: '0s', idle_timeout: '600s' }
        : { cluster: serviceClusterName, timeout: '60s' },
    // The service is ours, not a published API: no policy runs in front of it.
    typed_per_filter_config: extProcDisabled,
    // The address Envoy trusts, overwriting a client's copy (the engine, which strips the others, is off here).
    request_headers_to_add: setClientAddress,
  }));
}

/**
 * A filter that keeps one API of each header- or query-versioned set: its versions share one URL suffix, so a route
 * for each would repeat the first one's match, unreachable. The one route leads through the engine (no version gets
 * a bypass), which picks the version and sets the backend; the route's own backend is never used by itself.
 */
function firstOfVersionSet(): (api: BootstrapApi) => boolean {
  const routed = new Set<string>();
  return (api) => {
    if (api.versionSet === undefined) return true;
    if (routed.has(api.versionSet)) return false;
    routed.add(api.versionSet);
    return true;
  };
}

/**
 * The API's route, through the engine; before it, for an API the engine would only pass through, the routes that
 * skip it (with the timeout forward-request gives the backend call by default, as the engine would set).
 */
function apiRoutes(api: BootstrapApi): Route[] {
  const backend = new URL(api.serviceUrl);
  const basePath = backend.pathname.replace(/\/+$/, '');
  const toBackend = (timeout: RouteAction['timeout']): RouteAction => ({
    cluster: apiClusterName(api.id),
    // `/<suffix>/api/Course` reaches the backend as `<service path>/api/Course`.
    regex_rewrite: {
      pattern: { regex: `^/${escapeRegex(api.urlSuffix)}(/|$)` },
      substitution: `${basePath}/`,
    },
    host_rewrite_literal: backend.host,
    timeout,
  });
  const bypass = api.engineBypass
    ? bypassMatches(api.urlSuffix, api.engineBypass).map<Route>((match, index) => ({
        name: `api_${api.id}_bypass_${index}`,
        match,
        route: toBackend(`${forwardRequestTimeoutSeconds}s`),
        request_headers_to_add: bypassRequestHeaders,
        typed_per_filter_config: bypassFilterConfig,
      }))
    : [];
  return [
    ...bypass,
    { name: `api_${api.id}`, match: { path_separated_prefix: `/${api.urlSuffix}` }, route: toBackend('30s') },
  ];
}

/** forward-request's default timeout (API Management's), which the engine sets on a request it forwards. */
const forwardRequestTimeoutSeconds = 300;

function notFoundRoute(): Route {
  return {
    name: 'not_found',
    match: { prefix: '/' },
    direct_response: { status: 404, body: { inline_string: notFoundBody } },
    response_headers_to_add: [{ header: { key: 'content-type', value: 'application/json' } }],
    typed_per_filter_config: extProcDisabled,
  };
}

/**
 * Envoy resets every ext_proc stream when it is done with it (graceful close is off: see `layered_runtime`), and
 * Node's HTTP/2 server closes a connection on which its peer reset more than 1000 streams at once or 33 a second
 * for long (nghttp2's defense against rapid reset; Node 20 cannot change it). A connection that carries at most
 * this many streams never gets there: Envoy opens the next one (an engine connection costs one handshake per this
 * many requests) and drains the old one.
 */
const engineStreamsPerConnection = 500;

function engineCluster(plan: BootstrapPlan): Cluster {
  return {
    name: engineClusterName,
    // Containers (docker-compose) name the engine by its service name; a machine by address; a socket is a path.
    ...(plan.engine.socketPath !== undefined
      ? { type: 'STATIC' as const }
      : addressType(plan.engine.endpoints)),
    connect_timeout: '1s',
    // Each engine process is single-threaded: spread streams by how busy each one is.
    lb_policy: 'LEAST_REQUEST',
    typed_extension_protocol_options: {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
        '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
        explicit_http_config: {
          http2_protocol_options: { connection_keepalive: { interval: '30s', timeout: '5s' } },
        },
        common_http_protocol_options: { max_requests_per_connection: engineStreamsPerConnection },
      },
    },
    // Every in-flight HTTP request holds one ext_proc stream; the default limit of 1024 would turn load into 500s.
    circuit_breakers: {
      thresholds: [{ max_connections: 10_000, max_pending_requests: 10_000, max_requests: 10_000 }],
    },
    // An engine that died (`up` restarts it) or is draining answers NOT_SERVING or nothing: its streams go to the
    // others until it is back, instead of every other request failing. The health check notices within a second
    // and lets it back at its first good answer; outlier detection reacts to the failed streams at once. With every
    // engine out, Envoy's panic routing still tries them all (a prompt 500 rather than a wait).
    health_checks: [
      {
        timeout: '0.5s',
        interval: '1s',
        no_traffic_interval: '1s',
        unhealthy_threshold: 1,
        healthy_threshold: 1,
        grpc_health_check: { service_name: 'envoy.service.ext_proc.v3.ExternalProcessor' },
      },
    ],
    outlier_detection: {
      split_external_local_origin_errors: true,
      consecutive_local_origin_failure: 3,
      interval: '1s',
      base_ejection_time: '1s',
      max_ejection_time: '5s',
      max_ejection_percent: 50,
    },
    load_assignment: {
      cluster_name: engineClusterName,
      endpoints: [
        {
          lb_endpoints:
            plan.engine.socketPath !== undefined
              ? [{ endpoint: { address: { pipe: { path: plan.engine.socketPath } } } }]
              : plan.engine.endpoints.map((endpoint) => ({ endpoint: { address: socketAddress(endpoint) } })),
        },
      ],
    },
  };
}

function serviceCluster(plan: BootstrapPlan): Cluster {
  return staticCluster(serviceClusterName, plan.service);
}

/**
 * How long Envoy keeps an idle connection to a backend. Below the keep-alive of the servers backends commonly run on
 * (Node's 5 s, nginx's 75 s, Apache's 5 s): otherwise a request sent on a connection just as the backend closes it
 * for idleness is reset and the client gets a 502 (BackendConnectionFailure) for a request the backend never saw.
 */
const backendIdleTimeout = '4s';

/** A cluster for one backend URL; its endpoint carries the host name so `auto_host_rewrite` sets Host to it. */
function urlCluster(name: string, serviceUrl: string, clientCertificate?: UpstreamTlsPlan): Cluster {
  const url = new URL(serviceUrl);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return {
    name,
    // A backend named by DNS is resolved by Envoy; an IP literal needs no resolver.
    type: isIpLiteral(host) ? 'STATIC' : 'STRICT_DNS',
    dns_lookup_family: 'V4_PREFERRED',
    connect_timeout: '2s',
    load_assignment: {
      cluster_name: name,
      endpoints: [
        { lb_endpoints: [{ endpoint: { address: socketAddress({ host, port }), hostname: url.host } }] },
      ],
    },
    typed_extension_protocol_options: {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
        '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
        common_http_protocol_options: { idle_timeout: backendIdleTimeout },
        explicit_http_config: { http_protocol_options: {} },
      },
    },
    ...(url.protocol === 'https:' ? { transport_socket: backendTls(url, host, clientCertificate) } : {}),
  };
}

/** TLS to an https backend: SNI, and with a client certificate the backend's own certificate checked too. */
function backendTls(url: URL, host: string, clientCertificate?: UpstreamTlsPlan): UpstreamTransportSocket {
  if (!clientCertificate) {
    return {
      name: 'envoy.transport_sockets.tls',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
        sni: url.hostname,
      },
    };
  }
  const serverName = clientCertificate.serverName ?? host;
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
      // SNI carries host names only; a backend addressed by IP gets none, its certificate's IP SAN is checked.
      ...(isIpLiteral(serverName) ? {} : { sni: serverName }),
      common_tls_context: {
        tls_certificates: [
          {
            certificate_chain: { filename: clientCertificate.certificateFile },
            private_key: { filename: clientCertificate.keyFile },
          },
        ],
        // A backend that is given a client certificate is also checked: the certificate goes to it alone.
        validation_context: {
          trusted_ca: { filename: clientCertificate.trustedCaFile ?? systemCaFile },
          match_typed_subject_alt_names: [
            {
              san_type: isIpLiteral(serverName) ? 'IP_ADDRESS' : 'DNS',
              matcher: { exact: serverName },
            },
          ],
        },
      },
    },
  };
}

function dynamicCluster(tls: boolean): Cluster {
  return {
    name: dynamicClusterName(tls),
    connect_timeout: '2s',
    lb_policy: 'CLUSTER_PROVIDED',
    cluster_type: {
      name: 'envoy.clusters.dynamic_forward_proxy',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.clusters.dynamic_forward_proxy.v3.ClusterConfig',
        dns_cache_config: dnsCacheConfig,
      },
    },
    ...(tls
      ? {
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
              common_tls_context: {
                validation_context: { trusted_ca: { filename: systemCaFile } },
              },
            },
          },
        }
      : {}),
    typed_extension_protocol_options: {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
        '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
        // Envoy requires both of a dynamic forward proxy cluster once it has protocol options (inert without TLS).
        upstream_http_protocol_options: { auto_sni: true, auto_san_validation: true },
        common_http_protocol_options: { idle_timeout: backendIdleTimeout },
        explicit_http_config: { http_protocol_options: {} },
      },
    },
  };
}

/** STATIC for IP literals; STRICT_DNS (every address a name resolves to) when a host is a name. */
function addressType(
  endpoints: readonly Endpoint[],
):
  | { readonly type: 'STATIC' }
  | { readonly type: 'STRICT_DNS'; readonly dns_lookup_family: DnsLookupFamily } {
  return endpoints.every((endpoint) => isIpLiteral(endpoint.host))
    ? { type: 'STATIC' }
    : { type: 'STRICT_DNS', dns_lookup_family: 'V4_PREFERRED' };
}

function staticCluster(name: string, endpoint: Endpoint): Cluster {
  return {
    name,
    ...addressType([endpoint]),
    connect_timeout: '2s',
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(endpoint) } }] }],
    },
  };
}

function socketAddress(endpoint: Endpoint): Address {
  return { socket_address: { address: endpoint.host, port_value: endpoint.port } };
}

function seconds(milliseconds: number): Duration {
  return `${milliseconds / 1000}s`;
}

function isIpLiteral(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
