/**
 * What the policy runner needs from the outside world, injected so `src/policy` stays transport-free and
 * testable: caches, named backends, an HTTP client (openid-config/JWKS, send-request), a clock, a logger, a
 * trace sink and counters. The engine wires real implementations (src/state, src/catalog); tests use fakes.
 */

import type { KeyObject } from 'node:crypto';
import type { PolicyContext } from '../expr/index.js';
import type { LimitCounters } from '../limit-counters.js';
import type { Logger } from '../log.js';
import type { Scope, Section } from './schema.js';

/** A response kept by cache-store and served by cache-lookup. */
export interface CachedResponse {
  readonly status: number;
  readonly reason: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
}

/**
 * API Management's `caching-type`: the built-in (in-process) cache, the external one (Redis), or the external one
 * when configured and the built-in one otherwise. Caches that have only one tier ignore it.
 */
export type CachingType = 'internal' | 'external' | 'prefer-external';

export interface ResponseCache {
  get(key: string, caching?: CachingType): Promise<CachedResponse | undefined>;
  set(key: string, value: CachedResponse, ttlSeconds: number, caching?: CachingType): Promise<void>;
}

/** cache-lookup-value / cache-store-value / cache-remove-value. Values are expression runtime values. */
export interface ValueCache {
  get(key: string, caching?: CachingType): Promise<unknown>;
  set(key: string, value: unknown, ttlSeconds: number, caching?: CachingType): Promise<void>;
  delete(key: string, caching?: CachingType): Promise<void>;
}

/**
 * llm-semantic-cache-lookup / -store: responses found by how near the embedding of their prompt is to the
 * embedding of a new one. A partition holds the prompts that may share an answer (API, operation, model, vary-by);
 * nearness is the cosine distance (1 − cosine similarity). A cache that fails is a miss, never an error.
 */
export interface SemanticCache {
  /** The response stored under the nearest prompt of `partition` whose distance is ≤ maxDistance. */
  lookup(
    partition: string,
    embedding: readonly number[],
    maxDistance: number,
  ): Promise<{ readonly response: CachedResponse; readonly distance: number } | undefined>;
  store(
    partition: string,
    embedding: readonly number[],
    response: CachedResponse,
    ttlSeconds: number,
  ): Promise<void>;
}

/** A named backend (`set-backend-service backend-id`). */
export interface BackendInfo {
  readonly id: string;
  readonly url: string;
}

export interface BackendLookup {
  get(id: string): BackendInfo | undefined;
  /**
   * Optional: the backend a request named by `id` goes to now (set-backend-service backend-id): a pool's member,
   * chosen by priority group and weight among those whose circuit breaker is closed, or the single backend itself
   * unless its breaker is open. Absent: `get`, and no breaker.
   */
  choose?(id: string, cookies?: RequestCookies): Promise<BackendChoice>;
  /**
   * Optional: the `Set-Cookie` value the client's answer carries for the backend the request went to, when it came
   * from a pool with session affinity and the client's session cookie did not already name it.
   */
  sessionCookie?(selection: PoolSelection): string | undefined;
}

/** Where a request went, as far as a pool's sessions care (runtime.ts's BackendSelection is one). */
export interface PoolSelection {
  readonly backendId: string | undefined;
  readonly poolId?: string;
  readonly session?: PoolSession;
}

/** The value of the request's cookie `name` (the first one), if it has one. */
export type RequestCookies = (name: string) => string | undefined;

/** A client session of a pool with session affinity (API Management's session awareness). */
export interface PoolSession {
  /** The session's id: the client's, or a new one. */
  readonly id: string;
  /** The backend the client's session cookie named, when it was honoured (the backend is that one). */
  readonly pinned?: string;
}

/** What `BackendLookup.choose` found. */
export type BackendChoice =
  /** `poolId`: the pool the backend was chosen from; `session`: the client's session, for a pool with affinity. */
  | {
      readonly kind: 'backend';
      readonly backend: BackendInfo;
      readonly poolId?: string;
      readonly session?: PoolSession;
    }
  | { readonly kind: 'unknown' }
  /** Every backend it could be is tripped (API Management answers 503). */
  | { readonly kind: 'unavailable'; readonly message: string };

export interface HttpRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: Buffer;
  readonly timeoutMs: number;
  /** An HTTP proxy to send it through (send-request's `<proxy>`). */
  readonly proxy?: HttpProxy;
  /** The client certificate to present when the target asks for one (send-request's `<authentication-certificate>`). */
  readonly clientCertificate?: ClientCertificate;
}

/**
 * A client certificate the engine presents in the TLS handshake of a side request: one of the gateway's store
 * (PEM certificate and key) or a PKCS #12 blob a policy computed (`body`, with its `password`).
 */
export type ClientCertificate = (
  | { readonly kind: 'pem'; readonly certificate: string; readonly key: string }
  | { readonly kind: 'pfx'; readonly pfx: Buffer; readonly passphrase?: string }
) & {
  /**
   * Names the certificate among the connection pools (one per certificate): the store's id, or a digest of the
   * blob and its password, never the secret itself.
   */
  readonly poolKey: string;
  /** For messages: `certificate "id"` (the store's), or `the certificate of authentication-certificate/@body`. */
  readonly label: string;
};

export interface HttpProxy {
  /** `http://host:port`: API Management speaks plain HTTP to the proxy (proxy policy page). */
  readonly url: string;
  readonly username?: string;
  readonly password?: string;
}

export interface HttpResponse {
  readonly status: number;
  readonly reason: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
}

/** Rejects on connection failure or timeout (an Error whose `code` is 'TIMEOUT' for a timeout). */
export type HttpFetcher = (request: HttpRequest) => Promise<HttpResponse>;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Waits (retry intervals); tests pass a fake that returns at once. */
  sleep(ms: number): Promise<void>;
}

export type { Logger };

export type TraceSeverity = 'verbose' | 'information' | 'error';

export interface TraceEntry {
  readonly requestId: string;
  readonly source: string;
  readonly severity: TraceSeverity;
  readonly message: string;
  readonly metadata: readonly (readonly [string, string])[];
}

export interface TraceSink {
  /**
   * `logger`, when given, is the one of the request the entry belongs to (its lines carry the request's ids): a sink
   * that logs the entry logs it there.
   */
  write(entry: TraceEntry, logger?: Logger): void;
}

// The counters' contract is shared with state/ (which implements it) and the engine.
export type {
  ConcurrencyLease,
  CountMode,
  LimitCounters,
  QuotaRequest,
  QuotaResult,
  SlidingWindowRequest,
  SlidingWindowResult,
} from '../limit-counters.js';

/**
 * Where log-to-eventhub writes: an event stream per logger id (Redis streams or a file in the engine; API
 * Management would use Azure Event Hubs).
 */
export interface EventLog {
  append(
    loggerId: string,
    message: string,
    partition: { readonly id?: string; readonly key?: string },
  ): Promise<void>;
}

/** Custom metrics from emit-metric (API Management sends them to Application Insights; the engine to Prometheus). */
export interface MetricSink {
  emit(metric: {
    readonly name: string;
    readonly namespace: string;
    readonly value: number;
    readonly dimensions: readonly (readonly [string, string])[];
  }): void;
}

export type CounterOutcome = 'allowed' | 'refused' | 'failed';

/** Per-element counts; the engine exports them as Prometheus metrics. */
export interface PolicyCounters {
  count(element: string, outcome: CounterOutcome, reason?: string): void;
}

/**
 * The gateway's own identity (authentication-managed-identity): a token for a resource, from the source the
 * client-id selects or the default one, cached by the engine. Rejects with an Error whose message is safe to log and
 * to put into LastError (it never holds a token or a secret).
 */
export interface IdentityTokens {
  token(request: { readonly resource: string; readonly clientId?: string }): Promise<{
    readonly token: string;
    readonly expiresAt: number;
  }>;
}

/**
 * The private keys of the gateway's certificate store (tls.certificates) by certificate id, read once at start:
 * validate-jwt's and validate-azure-ad-token's `<decryption-keys><key certificate-id="…"/>`, and the certificates
 * send-request and send-one-way-request present (`<authentication-certificate>`).
 */
export interface CertificateKeys {
  privateKey(certificateId: string): KeyObject | undefined;
  /** The store's certificate with its key, by id or by thumbprint (SHA-1 of the DER, upper-case hex). */
  clientCertificate(
    which: { readonly id: string } | { readonly thumbprint: string },
  ): ClientCertificate | undefined;
}

/** get-authorization-context's credential manager: a connection's token and its claims. */
export interface AuthorizationContexts {
  authorization(request: {
    readonly providerId: string;
    readonly authorizationId: string;
    readonly user?: string;
  }): Promise<{ readonly accessToken: string; readonly claims: Readonly<Record<string, unknown>> }>;
}

/** Where a statement sits, for LastError, counters and observers. */
export interface StatementSite {
  readonly element: string;
  readonly scope: Scope;
  readonly section: Section;
  /** LastError.Path, e.g. `choose[3]\when[2]\set-header` (see lastErrorSteps in document.ts). */
  readonly path: string;
  readonly policyId: string;
  /** Where the element was written (its file, 1-based line and column). */
  readonly location: { readonly file: string; readonly line: number; readonly column: number };
}

/** How a statement ended: went on, answered the request, refused it (PolicyError), or failed (anything else). */
export type StatementOutcome = 'next' | 'respond' | 'refused' | 'failed';

/** What an observer sees of a run (a RunContext): its context, and the section running. */
export interface ObservedRun {
  readonly context: PolicyContext;
  readonly section: Section;
  /** A text of the run as an observer may show it: the request's secret values and credential shapes replaced. */
  redact(text: string): string;
}

/** Where a `choose` is, and which of its branches ran: a `when` (0-based), `otherwise`, or none of them. */
export interface BranchChoice {
  readonly location: StatementSite['location'];
  /** Each `when`'s location, in order (what a coverage report lists even when nothing took it). */
  readonly whens: readonly StatementSite['location'][];
  readonly otherwise: StatementSite['location'] | undefined;
  readonly taken: number | 'otherwise' | 'none';
  /** The value of each condition evaluated, in order (later ones are not evaluated once one is true). */
  readonly conditions: readonly boolean[];
}

/**
 * Watches a pipeline run, statement by statement: `portcullis test` and `portcullis run` (traces, coverage) and a
 * request an operator traces. Without one (live traffic) the compiled statements do nothing extra.
 */
export interface PolicyObserver {
  /** Whether this run is watched at all (an engine that traces some requests watches only those). */
  observes(run: ObservedRun): boolean;
  /** A run's context exists and no section has run yet (a test sets its variables and identity here). */
  runStarted(run: ObservedRun): void;
  statementStarted(site: StatementSite, run: ObservedRun): void;
  statementEnded(site: StatementSite, run: ObservedRun, outcome: StatementOutcome, error?: unknown): void;
  branchTaken(choice: BranchChoice, run: ObservedRun): void;
  /**
   * Optional, for an observer that shows values (a trace): what hears the values a run it observes computes
   * (RunWatch), or undefined for none. Asked once per run, when it starts, so a run nobody watches pays one field
   * read per expression. What it shows of a value goes through `run.redact`.
   */
  watch?(run: ObservedRun): RunWatch | undefined;
  /**
   * Optional: runs one section (`run.section` says which) of a run this observer watches, so that everything the
   * section runs happens inside what the observer keeps for it (a tracer: the section's span, the parent of its
   * statements' spans). It resolves or rejects as the section does. Without it the section runs as unwatched.
   */
  inSection?(run: ObservedRun, section: () => SectionResult): Promise<SectionFlow>;
  /**
   * Optional: runs a statement between its statementStarted and statementEnded, so that what it starts (a call out)
   * is inside it (a tracer: its span is the parent of the call's). Synchronous when the statement is.
   */
  inStatement?<T>(site: StatementSite, run: ObservedRun, statement: () => T): T;
}

/** What a watched run tells its observer besides statements and branches (RunContext.watch). */
export interface RunWatch {
  /**
   * A statement evaluated a policy expression: `label` is where it was written (`element/@attribute`, the element
   * whose text it is, or the name its parent gives the value, e.g. set-header's header); `credential` when that
   * name is a credential's (an `Authorization` header, an `api-key` parameter), whose value must not be shown.
   */
  value(label: string, value: unknown, credential: boolean): void;
}

/** How a section that did not fail ended: went on to the next one, or answered the request. */
export type SectionFlow = 'next' | 'respond';
export type SectionResult = SectionFlow | Promise<SectionFlow>;

export interface PolicyServices {
  readonly responseCache: ResponseCache;
  readonly valueCache: ValueCache;
  readonly semanticCache: SemanticCache;
  readonly limits: LimitCounters;
  readonly eventLog: EventLog;
  /** Optional: without a sink, emit-metric writes the metric to the logger (info) so nothing is lost silently. */
  readonly metrics?: MetricSink;
  readonly backends: BackendLookup;
  readonly fetch: HttpFetcher;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly trace: TraceSink;
  readonly counters: PolicyCounters;
  /** Optional: without it, authentication-managed-identity fails as if the identity endpoint could not be reached. */
  readonly identities?: IdentityTokens;
  /**
   * Where validate-azure-ad-token finds tenants' OpenID configurations when the policy names no
   * authentication-endpoint (identities.entraAuthority); absent: https://login.microsoftonline.com.
   */
  readonly entraAuthority?: string;
  /** Optional: without it, a decryption key naming a certificate-id fails (500) as an unknown certificate. */
  readonly certificateKeys?: CertificateKeys;
  /** Optional: without it, get-authorization-context fails (no connection is configured). */
  readonly authorizations?: AuthorizationContexts;
  /** Told about every statement and branch of every run (tests, traced requests); absent on live traffic. */
  readonly observer?: PolicyObserver;
  /** How long the gateway in front waits for the section being run; absent: as long as the work takes. */
  readonly deadline?: WorkDeadline;
}

/**
 * The wait of the gateway in front (Envoy) for the phase a section runs in, which is shorter than a policy's own
 * timeouts unless the engine asks for more before slow work: a call to another service, a retry's pauses.
 */
export interface WorkDeadline {
  /**
   * Work that may take up to `ms` is about to start: asks the gateway to wait for it (plus the time to answer),
   * and returns how long the work may take (≤ `ms`) so that the section still ends in time — with its own
   * Timeout error, in on-error, rather than the gateway's 504 — when the gateway grants less.
   */
  reserve(ms: number): number;
}
