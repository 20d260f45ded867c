import type { Tracer } from '@opentelemetry/api';
import { SubscriptionDirectory } from '../catalog/subscriptions.js';
import { type CompiledGateway, compileGateway } from '../config/gateway.js';
import type { LoadedConfig } from '../config/load.js';
import { authorizationServerKeys } from '../config/signing-keys.js';
import { maxMessageTimeoutMs } from '../envoy/contract.js';
import type { ExchangeFactory } from '../extproc/exchange.js';
import { CredentialManager, Identities, readSecret } from '../identity/index.js';
import { processLogger } from '../log.js';
import type { BackendCertificates } from '../policy/elements/authentication-certificate.js';
import type { AuthorizationContexts, CertificateKeys, IdentityTokens } from '../policy/index.js';
import { DelegatedTokens, sharedSealedRecords } from '../state/delegated-tokens.js';
import { BackendRoutes } from './backend-routes.js';
import { assertEnvoyRoutesServe, type BackendRouting } from './backend-routing.js';
import { certificateTables } from './certificates.js';
import type { TrustStore } from './client-certificate.js';
import type { ElementCounters } from './element-counters.js';
import { EngineState, type EngineStateKeeper, type HeldEngineState } from './engine-state.js';
import { policyExchanges } from './exchange/policy-exchange.js';
import type { ExchangeSummary } from './exchange/summary.js';
import { tracedExchanges } from './exchange-spans.js';
import { assertExtAuthzServes } from './ext-authz-check.js';
import { type McpAccess, mcpAccessOf } from './mcp-access.js';
import { mcpToolHintsOf } from './mcp-tool-hints.js';
import { mcpToolFiltersOf } from './mcp-tools.js';
import type { EngineMetrics } from './metrics.js';
import { bothObservers, PolicySpans, traceWithSpanEvents } from './policy-spans.js';
import { createEngineServices, type EngineServices } from './services.js';
import { TraceRouter } from './trace.js';

export interface EngineParts {
  readonly exchanges: ExchangeFactory;
  readonly counters: ElementCounters;
  readonly metrics: EngineMetrics;
  /** The policy services (caches, limits, event sink); shared state through Redis when `state.redis` is set. */
  readonly services: EngineServices;
  /**
   * Lets the engine state go: hands it back to the keeper (which closes it once no generation holds it), or
   * closes the state this engine opened itself. Call after the ext_proc server has drained.
   */
  close(): Promise<void>;
}

export interface EngineOptions {
  /** One structured log line per request (default true). */
  readonly accessLog?: boolean;
  /** Open ext_proc streams, for the metrics gauge (known once the server runs). */
  readonly activeStreams?: () => number;
  /** Overrides `engine.traceKey`: the key that switches debug tracing on for one request; none: off. */
  readonly traceKey?: string;
  /** The authorities client certificates are checked against (`clientTrustStore`). */
  readonly trust?: TrustStore;
  /** Client certificates presented to backends (`backendCertificateTable`). */
  readonly backendCertificates?: BackendCertificates;
  /** The private keys of the certificate store (`certificatePrivateKeys`), for token decryption. */
  readonly certificateKeys?: CertificateKeys;
  /** The folder of the configuration file: `state.dataDir` is relative to it. */
  readonly directory?: string;
  /**
   * The process's engine state across reloads (caches, counters): each engine built with it holds the current
   * state, or a new one when the state section changed. Without it the engine opens its own state.
   */
  readonly states?: EngineStateKeeper;
  /**
   * `ext_authz`: the engine answers Envoy's ext_authz filter, which carries only the request headers; a configuration
   * with a pipeline that needs more is refused (NeedsExtProcError, naming each element). Default `ext_proc`.
   */
  readonly transport?: EngineTransport;
  /**
   * `envoy-route`: the Envoy in front routes each API by its own route, not by the engine's backend choice; a
   * configuration whose policies literally choose another backend is refused (BackendNotRoutableError, naming
   * each element), a computed choice of one gets a 500. Default `engine` (see backend-routing.ts).
   */
  readonly backendRouting?: BackendRouting;
  /** The gateway's token sources (`identitiesOf`); without them authentication-managed-identity fails. */
  readonly identities?: IdentityTokens;
  /** The credential manager (`credentialManagerOver`); without it get-authorization-context fails. */
  readonly authorizations?: AuthorizationContexts;
  /**
   * The credential manager over the engine's state (its user-delegated connections read the shared state), when
   * `authorizations` is not given.
   */
  readonly authorizationsOver?: (state: EngineState) => AuthorizationContexts;
  /** The process's tracer (`telemetry.otlp`): each request gets a span (exchange-spans.ts); absent: none, no cost. */
  readonly tracer?: Tracer;
  /** The authorization server's check in front of the MCP server APIs (`mcpAccessOf`). */
  readonly mcpAccess?: McpAccess;
}

export type EngineTransport = 'ext_proc' | 'ext_authz';

/**
 * Compiles every policy of a loaded configuration, reads the certificate files a backend or a policy can use (from
 * `loaded.files` when it holds them: the running configuration's snapshot), and creates the engine: what an engine process runs (again
 * on every reload).
 */
export async function buildEngine(loaded: LoadedConfig, options: EngineOptions = {}): Promise<EngineParts> {
  const gateway = compileGateway(loaded);
  if (options.transport === 'ext_authz') assertExtAuthzServes(gateway, loaded.file);
  if (options.backendRouting === 'envoy-route') assertEnvoyRoutesServe(gateway);
  return createEngine(gateway, {
    ...(await certificateTables(loaded, gateway)),
    directory: loaded.directory,
    identities: identitiesOf(loaded),
    mcpAccess: mcpAccessOf(loaded.config, authorizationServerKeys(loaded)),
    authorizationsOver: await credentialManagerOver(loaded),
    ...options,
  });
}

/**
 * get-authorization-context's providers and connections (identities.credentialProviders), over an engine state:
 * user-delegated connections read the upstream tokens the service keeps in the shared state (state.dataDir or
 * state.redis), sealed with identities.delegatedTokenKey (read once here, at build).
 */
export async function credentialManagerOver(
  loaded: LoadedConfig,
): Promise<(state: EngineState) => CredentialManager> {
  const key = loaded.config.identities?.delegatedTokenKey;
  const secret =
    key === undefined ? undefined : await readSecret(key, loaded.directory, 'identities.delegatedTokenKey');
  return (state) => {
    const records = secret === undefined ? undefined : sharedSealedRecords(state.backend);
    return new CredentialManager({
      providers: loaded.config.identities?.credentialProviders ?? {},
      directory: loaded.directory,
      ...(records !== undefined ? { delegated: new DelegatedTokens(records, secret!) } : {}),
    });
  };
}

/**
 * The token sources of the `identities` section, plus the implicit `portcullis` source when `auth` is on: it signs
 * with the keys the authorization server keeps in its keys file or data directory (config/signing-keys.ts).
 */
export function identitiesOf(loaded: LoadedConfig): Identities {
  const { auth, identities } = loaded.config;
  const keys = authorizationServerKeys(loaded);
  return new Identities({
    directory: loaded.directory,
    ...(identities ? { config: identities } : {}),
    ...(auth && keys ? { authorizationServer: { issuer: auth.issuer, signingKeys: keys } } : {}),
  });
}

/** The policy engine for a compiled gateway: the exchange factory the ext_proc server runs, and its counters. */
export function createEngine(gateway: CompiledGateway, options: EngineOptions = {}): EngineParts {
  const traces = new TraceRouter(processLogger);
  const traceKey = options.traceKey ?? gateway.config.engine.traceKey;
  const held = options.states?.hold(gateway.config.state, options.directory) ?? ownState(gateway, options);
  const authorizations = options.authorizations ?? options.authorizationsOver?.(held.state);
  // Steps are recorded only when an operator can switch tracing on for a request; spans only when the engine traces.
  const spans = options.tracer ? new PolicySpans(options.tracer) : undefined;
  const observer = traceKey && spans ? bothObservers(traces, spans) : traceKey ? traces : spans;
  const services = createEngineServices({
    backends: gateway.backends,
    backendEntities: gateway.backendEntities,
    shared: held.state,
    trace: options.tracer ? traceWithSpanEvents(traces) : traces,
    ...(observer ? { observer } : {}),
    ...(options.backendCertificates ? { backendCertificates: options.backendCertificates } : {}),
    ...(options.certificateKeys ? { certificateKeys: options.certificateKeys } : {}),
    ...(options.identities ? { identities: options.identities } : {}),
    ...(authorizations ? { authorizations } : {}),
    ...(gateway.config.identities?.entraAuthority
      ? { entraAuthority: gateway.config.identities.entraAuthority }
      : {}),
  });
  const routes = new BackendRoutes(gateway.config.apis, gateway.backends);
  const accessLog = options.accessLog ?? true;
  const metrics = held.state.metrics;
  const onExchangeEnd = (summary: ExchangeSummary) => {
    metrics.recordExchange(summary);
    if (accessLog) processLogger.info('request', { ...summary });
  };
  const exchanges = policyExchanges({
    catalog: gateway.catalog,
    routes,
    backendEntities: {
      watching:
        services.breakers.watching ||
        gateway.backendEntities.some((entity) => entity.pool?.sessionAffinity !== undefined),
      breakers: services.breakers,
      byId: services.backendEntities,
    },
    ...(options.backendRouting ? { backendRouting: options.backendRouting } : {}),
    services,
    onExchangeEnd,
    ...(traceKey ? { debugTrace: { key: traceKey, router: traces, logger: processLogger } } : {}),
    subscriptions: new SubscriptionDirectory(gateway.config),
    ...(options.mcpAccess ? { mcpAccess: options.mcpAccess } : {}),
    mcpTools: mcpToolFiltersOf(gateway.config, mcpToolHintsOf(held.state.backend)),
    maxRequestBodyBytes: gateway.config.gateway.limits.maxRequestBodyBytes,
    maxMessageTimeoutMs: maxMessageTimeoutMs(gateway.config.gateway.limits),
    ...(options.trust ? { trust: options.trust } : {}),
  });
  return {
    exchanges: options.tracer
      ? tracedExchanges(exchanges, options.tracer, gateway.config.telemetry?.otlp?.samplingRatio === 1)
      : exchanges,
    counters: services.counters,
    metrics,
    services,
    close: () => held.release(),
  };
}

/** An engine without a keeper (tests, one-shot tools) opens its own state and closes it with itself. */
function ownState(gateway: CompiledGateway, options: EngineOptions): HeldEngineState {
  const state = new EngineState({
    state: gateway.config.state,
    ...(options.directory === undefined ? {} : { directory: options.directory }),
    ...(options.activeStreams === undefined ? {} : { activeStreams: options.activeStreams }),
  });
  return { state, release: () => state.close() };
}
