/**
 * What the bootstrap is built from: the gateway as Envoy needs to know it (listeners, TLS, the processes behind
 * Envoy, the APIs and backends, limits, tracing), with its defaults. The configuration (config/plan.ts) makes one;
 * every other file of this folder reads it. A new Envoy option starts here, as a field and its default.
 */

import type { EngineBypass } from './engine-bypass.js';
import type { TracingPlan } from './tracing.js';

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
  /** A WebSocket API: its route lets the handshake upgrade, after the engine ran the handshake's policies. */
  readonly websocket?: boolean;
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
 * Envoy's readiness and statistics, read-only, from the admin listener, and the management API (management.ts).
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

/** A named backend as Envoy sees it: a pool (no URL) has no cluster of its own, its members have theirs. */
export interface BackendPlan {
  readonly id: string;
  readonly url?: string | undefined;
  /** API Management's `tls` of the backend entity; absent: both checks on, against the system store. */
  readonly tls?:
    | {
        readonly validateCertificateChain?: boolean;
        readonly validateCertificateName?: boolean;
        /** An absolute path (config/plan.ts resolves it). */
        readonly trustedCa?: string | undefined;
      }
    | undefined;
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
  /**
   * The most upgraded connections one WebSocket API carries at once through this Envoy (its cluster's circuit
   * breaker: an upgraded connection is one request for as long as it is open); the handshake beyond is answered 503
   * and never reaches the backend.
   */
  readonly webSocketConnections: number;
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
  // API Management's "active WebSocket connections per unit" (its limits page), a unit being one gateway.
  webSocketConnections: 5_000,
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
  /** Named backends (`set-backend-service backend-id`): each single one (with a URL) its own cluster. */
  readonly backends?: readonly BackendPlan[];
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

/** The listeners of a plan: the one plain HTTP listener when the plan names none. */
export function listenersOf(plan: BootstrapPlan): readonly ListenerPlan[] {
  return plan.listeners ?? [{ name: 'gateway_http', role: 'http', address: plan.gateway }];
}

/** The plan's limits: `defaultGatewayLimits` when it sets none. */
export function limitsOf(plan: BootstrapPlan): GatewayLimits {
  return plan.limits ?? defaultGatewayLimits;
}
