import path from 'node:path';
import type { Tracer } from '@opentelemetry/api';
import type { JWK } from 'jose';
import type Koa from 'koa';
import {
  type AuthorizationServer,
  type AuthServerOptions,
  type ClientMetadataDocumentsOptions,
  createAuthorizationServer,
  type UpstreamProviderOptions,
} from '../auth/index.js';
import { createEmbeddedStores } from '../auth/stores/embedded.js';
import { createRedisStores } from '../auth/stores/redis.js';
import { ConfigError } from '../config/config-error.js';
import { type LoadedConfig, problemAt, readNamedFile } from '../config/load.js';
import { mcpResourceUrl } from '../config/mcp-servers.js';
import type { GatewayConfig } from '../config/schema.js';
import { type AuthConfig, mcpConfigSchema } from '../config/service-schema.js';
import type { Diagnostic } from '../diagnostic.js';
import { processLogger } from '../log.js';
import { createMcpEndpoint, type McpEndpoint, type SessionStore } from '../mcp/index.js';
import { closeStateBackend, openStateBackend, type StateBackend, unknownBackend } from '../state/backend.js';
import { DelegatedTokens, memorySealedRecords, sharedSealedRecords } from '../state/delegated-tokens.js';
import { PORTCULLIS_VERSION } from '../version.js';
import { createServiceApp } from './app.js';
import { configToolCatalog } from './catalog.js';
import { clientAddress } from './client-address.js';
import { callerApis, createGatewayCaller } from './gateway-caller.js';
import { RedisSessionStore } from './mcp-redis-sessions.js';
import { configUpstreamCatalog, gatewayUpstreamRouter, mcpServerMetadata } from './mcp-upstreams.js';
import type { ServiceMetrics } from './metrics.js';

export interface ServiceOptions {
  /** Where this process reaches Envoy's gateway listener (tool calls go through it), e.g. `http://127.0.0.1:8080`. */
  readonly gatewayUrl?: string;
  /** Version reported in the MCP `serverInfo`. */
  readonly version?: string;
  /** Counts requests, token requests, MCP sessions and tool calls (the service's /metrics). */
  readonly metrics?: ServiceMetrics;
  /** The process's tracer (`telemetry.otlp`): a span per request; absent: none. */
  readonly tracer?: Tracer;
}

export interface Service {
  readonly app: Koa;
  /** Present when the configuration has an `auth` section. */
  readonly authorizationServer?: AuthorizationServer;
  /** Present when the configuration has an `auth` section (the endpoint needs the server's tokens). */
  readonly mcp?: McpEndpoint;
  /** The MCP endpoint URL clients use (the token audience), when served. */
  readonly mcpUrl?: string;
  /**
   * Follows a reloaded configuration without a restart: the products (the AS's scopes), the APIs the tool calls
   * reach and the MCP tool list. Everything else this process set up at start stays as it is; the result names
   * what differs. A configuration the service cannot serve is refused whole with a ConfigError, nothing changed.
   */
  reload(loaded: LoadedConfig): Promise<ServiceReload>;
  close(): Promise<void>;
}

export interface ServiceReload {
  /** The tools the MCP endpoint serves now (operations of APIs in a product); 0 without one. */
  readonly tools: number;
  /** Settings that differ from the running ones and take effect the next time the service starts. */
  readonly atNextStart: readonly string[];
}

/**
 * Builds the Koa service from a loaded configuration: the OAuth 2.1 authorization server and the MCP endpoint
 * whose tools are the configured APIs, called through the gateway. Without an `auth` section it serves only
 * `/healthz`. Configuration problems that span sections are reported as ConfigError with file:line:col.
 */
export async function createService(loaded: LoadedConfig, options: ServiceOptions = {}): Promise<Service> {
  const { config } = loaded;
  const problems = await crossSectionProblems(loaded, options);
  if (problems.length > 0) throw new ConfigError(problems);
  const auth = config.auth;
  if (!auth) {
    return {
      app: createServiceApp({
        ...(options.metrics ? { middleware: [options.metrics.middleware] } : {}),
        ...(options.tracer ? { tracer: options.tracer } : {}),
      }),
      async reload(next) {
        await refuseProblems(next, options);
        return { tools: 0, atNextStart: fixedSettings(config, next.config) };
      },
      close: async () => {},
    };
  }
  // Without an `mcp` block, every MCP setting has its schema default.
  const mcpConfig = config.mcp ?? mcpConfigSchema.parse({});

  const signingKeys: NonNullable<AuthServerOptions['signingKeys']> = {
    algorithm: auth.signingKeys?.algorithm ?? 'ES256',
  };
  if (auth.signingKeys?.file) signingKeys.keys = await readSigningKeys(loaded, auth.signingKeys.file);

  const mcpUrl = `${auth.baseUrl.replace(/\/+$/, '')}/v1/mcp`;
  // Without Redis, state.dataDir keeps the OAuth state of this machine across restarts (shared by its processes).
  const backend = openStateBackend(config.state, { directory: loaded.directory, logger: processLogger });
  if (backend.kind === 'redis' && !auth.signingKeys?.file && !auth.dataDir) {
    // Codes and refresh tokens are shared through Redis, the private keys never are: a token one process signed
    // would not verify in another, and a refresh redeemed there would fail.
    processLogger.warn(
      'state.redis shares OAuth state between service processes, but each one generates its own signing keys; ' +
        'set auth.signingKeys.file (or a shared auth.dataDir) when more than one service process runs',
    );
  }
  const authorizationServer = await startAuthorizationServer(loaded, auth, {
    mcpUrl,
    signingKeys,
    backend,
  });

  const gatewayUrl = options.gatewayUrl!;
  const catalog = configToolCatalog(config);
  const gatewayCaller = createGatewayCaller({
    gatewayUrl,
    audienceBase: mcpConfig.gatewayUrl ?? gatewayUrl,
    apis: callerApis(config),
    mint: (input) => authorizationServer.mintServiceToken(input),
    tokenTtlSeconds: mcpConfig.serviceTokenTtlSeconds,
  });
  const caller = options.metrics ? options.metrics.countCalls(gatewayCaller) : gatewayCaller;
  const upstreamCatalog = configUpstreamCatalog(config);
  // Read at each new upstream session, so a reload's URL suffixes are followed.
  let urlSuffixes = new Map(config.apis.map((api) => [api.id, api.urlSuffix]));
  let mcpApis = config;
  const mcp = createMcpEndpoint({
    resourceUrl: mcpUrl,
    issuer: authorizationServer.metadata().issuer as string,
    verifier: {
      verifyAccessToken: (token, expected) => authorizationServer.verifyAccessToken(token, expected),
    },
    catalog,
    caller,
    allowedOrigins: mcpConfig.allowedOrigins,
    ...(mcpConfig.allowedHosts ? { allowedHosts: mcpConfig.allowedHosts } : {}),
    serverInfo: { name: 'portcullis', title: 'Portcullis', version: options.version ?? PORTCULLIS_VERSION },
    responseMode: mcpConfig.responseMode,
    pageSize: mcpConfig.pageSize,
    maxBatchSize: mcpConfig.maxBatchSize,
    batchConcurrency: mcpConfig.batchConcurrency,
    maxConcurrentPerSession: mcpConfig.maxConcurrentRequestsPerSession,
    ...mcpSessionStore(backend),
    logger: processLogger,
    upstreams: {
      catalog: upstreamCatalog,
      router: gatewayUpstreamRouter({
        gatewayUrl,
        resourceBase: auth.baseUrl,
        urlSuffixes: (apiId) => urlSuffixes.get(apiId),
        mint: (input) => authorizationServer.mintServiceToken(input),
        tokenTtlSeconds: mcpConfig.serviceTokenTtlSeconds,
      }),
    },
  });

  // The AS reads raw bodies itself and the MCP adapter reads its own: no body parser in front of either.
  options.metrics?.watchMcp(() => mcp.stats());
  const app = createServiceApp({
    middleware: [
      ...(options.metrics ? [options.metrics.middleware] : []),
      mcpServerMetadata({
        issuer: authorizationServer.metadata().issuer as string,
        baseUrl: auth.baseUrl,
        apis: () => mcpApis,
      }),
      authorizationServer.middleware,
      mcp.middleware,
    ],
    ...(options.tracer ? { tracer: options.tracer } : {}),
  });
  // What runs now: the settings a reload does not apply are compared with the ones the service started with.
  const started = config;
  return {
    app,
    authorizationServer,
    mcp,
    mcpUrl,
    async reload(next) {
      await refuseProblems(next, options);
      const products = next.config.products.map((product) => product.id);
      try {
        // First, as it is the one step that can still refuse (no products left once `auth` is gone).
        authorizationServer.setProducts(products);
      } catch (error) {
        if (!(error instanceof TypeError)) throw error;
        throw new ConfigError([await problemAt(next.file, ['products'], error.message)]);
      }
      // The routes before the tools: a tool that appears can be called at once.
      gatewayCaller.replaceApis(callerApis(next.config));
      urlSuffixes = new Map(next.config.apis.map((api) => [api.id, api.urlSuffix]));
      upstreamCatalog.replace(next.config);
      mcpApis = next.config;
      catalog.replace(next.config);
      return { tools: mcp.stats().tools, atNextStart: fixedSettings(started, next.config) };
    },
    async close() {
      await mcp.close();
      await authorizationServer.close();
      await closeStateBackend(backend);
    },
  };
}

/**
 * The OAuth 2.1 authorization server of a configuration with `auth`; the state it shares (Redis, or the embedded store
 * of state.dataDir) is closed again when it cannot start. What it still refuses is a configuration problem of `auth`.
 */
async function startAuthorizationServer(
  loaded: LoadedConfig,
  auth: NonNullable<LoadedConfig['config']['auth']>,
  shared: {
    readonly mcpUrl: string;
    readonly signingKeys: NonNullable<AuthServerOptions['signingKeys']>;
    readonly backend: StateBackend;
  },
): Promise<AuthorizationServer> {
  const { config } = loaded;
  const { mcpUrl, signingKeys, backend } = shared;
  try {
    return await createAuthorizationServer({
      issuer: auth.issuer,
      baseUrl: auth.baseUrl,
      // The MCP server APIs' own URLs are resources too (their tokens are checked by the engine): those of the
      // configuration the service started with (one added by a reload is accepted from the next start).
      resource: [
        mcpUrl,
        ...config.apis
          .filter((api) => api.type === 'mcp')
          .map((api) => mcpResourceUrl(auth.baseUrl, api.urlSuffix)),
      ],
      products: config.products.map((product) => product.id),
      users: auth.users.map((user) => ({
        username: user.username,
        passwordHash: user.passwordHash,
        ...(user.name ? { name: user.name } : {}),
      })),
      accessTokenTtlSeconds: auth.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: auth.refreshTokenTtlSeconds,
      codeTtlSeconds: auth.codeTtlSeconds,
      sessionTtlSeconds: auth.sessionTtlSeconds,
      allowPlainPkce: auth.allowPlainPkce,
      cookieSecure: auth.cookieSecure,
      clientAddress,
      signingKeys,
      logger: processLogger,
      ...(auth.limits ? { limits: auth.limits } : {}),
      ...(auth.dataDir ? { dataDir: path.resolve(loaded.directory, auth.dataDir) } : {}),
      ...(auth.identityProvider
        ? { identityProvider: await identityProvider(loaded, auth.identityProvider, delegatedScopes(config)) }
        : {}),
      ...(auth.identityProvider && config.identities?.delegatedTokenKey
        ? { delegatedTokens: await delegatedTokens(loaded, backend) }
        : {}),
      clientMetadataDocuments: await clientMetadataDocuments(loaded, auth.clientMetadataDocuments),
      // With Redis (or state.dataDir on one machine), codes, refresh tokens, grants, revocations, sessions,
      // consents, abuse counters and client registrations are shared by every service process and outlive it;
      // signing keys stay in signingKeys.file or auth.dataDir (private keys are never written to a store).
      ...authStores(backend),
    });
  } catch (error) {
    await closeStateBackend(backend);
    // The schema mirrors the AS's rules; anything it still refuses is a configuration problem of `auth`.
    if (error instanceof TypeError)
      throw new ConfigError([await problemAt(loaded.file, ['auth'], error.message)]);
    throw error;
  }
}

async function refuseProblems(loaded: LoadedConfig, options: ServiceOptions): Promise<void> {
  const problems = await crossSectionProblems(loaded, options);
  if (problems.length > 0) throw new ConfigError(problems);
}

/**
 * Settings of the service a reload leaves as they started (users, lifetimes, URLs, keys, the MCP endpoint's
 * options, the Redis connection), by key path, where `next` differs from `running`.
 */
function fixedSettings(running: GatewayConfig, next: GatewayConfig): string[] {
  const differs = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
  const changed: string[] = [];
  for (const section of ['auth', 'mcp'] as const) {
    const [before, after] = [running[section], next[section]];
    if (before === undefined || after === undefined) {
      if (before !== after) changed.push(section);
      continue;
    }
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    for (const key of keys) {
      if (differs(before[key as keyof typeof before], after[key as keyof typeof after]))
        changed.push(`${section}.${key}`);
    }
  }
  if (differs(running.state.redis, next.state.redis)) changed.push('state.redis');
  if (differs(running.state.dataDir, next.state.dataDir)) changed.push('state.dataDir');
  return changed;
}

/** What the service needs beyond the configuration file (whose cross-field rules the loader has checked). */
async function crossSectionProblems(loaded: LoadedConfig, options: ServiceOptions): Promise<Diagnostic[]> {
  if (!loaded.config.auth || options.gatewayUrl) return [];
  return [
    await problemAt(
      loaded.file,
      ['auth'],
      'the service needs the gateway URL to send tool calls through (--gateway-url)',
    ),
  ];
}

/** The AS's stores: in the state's backend, or (none given) the AS's own in memory. */
function authStores(backend: StateBackend): Pick<AuthServerOptions, 'stores'> {
  switch (backend.kind) {
    case 'redis':
      return { stores: createRedisStores(backend.connection) };
    case 'embedded':
      return { stores: createEmbeddedStores(backend.store) };
    case 'memory':
      return {};
    default:
      return unknownBackend(backend);
  }
}

/** The MCP endpoint's sessions: in Redis, or (none given) the endpoint's own in this process. */
function mcpSessionStore(backend: StateBackend): { sessionStore?: SessionStore } {
  switch (backend.kind) {
    // With Redis, every service process behind Envoy serves every session (and resumes its streams).
    case 'redis':
      return { sessionStore: new RedisSessionStore(backend.connection) };
    // Without it the sessions stay in this process, also with state.dataDir: they are cheap to re-initialize, and
    // one service process per machine serves them all.
    case 'embedded':
    case 'memory':
      return {};
    default:
      return unknownBackend(backend);
  }
}

/**
 * Where the upstream tokens of users who sign in through auth.identityProvider are kept for the engine's
 * user-delegated connections: the shared state (the engine is another process), sealed with
 * identities.delegatedTokenKey. Without shared state (the configuration check refuses delegated connections then)
 * they stay in this process.
 */
async function delegatedTokens(loaded: LoadedConfig, backend: StateBackend): Promise<DelegatedTokens> {
  const where = ['identities', 'delegatedTokenKey'];
  const key = loaded.config.identities!.delegatedTokenKey!;
  let secret: string;
  if (typeof key === 'string') secret = key;
  else if ('env' in key) {
    const value = process.env[key.env];
    if (!value)
      throw new ConfigError([
        await problemAt(loaded.file, [...where, 'env'], `environment variable ${key.env} is not set`),
      ]);
    secret = value;
  } else {
    const file = path.resolve(loaded.directory, key.file);
    try {
      secret = (await readNamedFile(file, loaded.files)).toString('utf8').trim();
    } catch (error) {
      throw new ConfigError([
        await problemAt(
          loaded.file,
          [...where, 'file'],
          `cannot read ${file} (${(error as NodeJS.ErrnoException).code})`,
        ),
      ]);
    }
  }
  try {
    return new DelegatedTokens(sharedSealedRecords(backend) ?? memorySealedRecords(), secret);
  } catch (error) {
    throw new ConfigError([await problemAt(loaded.file, where, (error as Error).message)]);
  }
}

/** A JWK Set of private keys from a file next to the configuration. */
async function readSigningKeys(loaded: LoadedConfig, file: string): Promise<JWK[]> {
  const where = ['auth', 'signingKeys', 'file'];
  const resolved = path.resolve(loaded.directory, file);
  let parsed: unknown;
  try {
    parsed = JSON.parse((await readNamedFile(resolved, loaded.files)).toString('utf8'));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ConfigError([
      await problemAt(loaded.file, where, `cannot read ${resolved} as JSON (${reason})`),
    ]);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((key) => key && typeof key === 'object')) {
    throw new ConfigError([
      await problemAt(loaded.file, where, `${resolved} must be a JWK Set: {"keys": [ {private JWK}, … ]}`),
    ]);
  }
  for (const [index, key] of (keys as Record<string, unknown>[]).entries()) {
    if (typeof key.kid !== 'string' || typeof key.alg !== 'string' || typeof key.d !== 'string') {
      throw new ConfigError([
        await problemAt(
          loaded.file,
          where,
          `${resolved}: keys[${index}] must be a private key with "kid" and "alg" (a public key cannot sign)`,
        ),
      ]);
    }
  }
  return keys as JWK[];
}

/** The AS's document options, with the development CA file (if any) read. */
async function clientMetadataDocuments(
  loaded: LoadedConfig,
  config: AuthConfig['clientMetadataDocuments'],
): Promise<ClientMetadataDocumentsOptions> {
  const { trustedCa, ...options } = config;
  if (trustedCa === undefined) return options;
  const resolved = path.resolve(loaded.directory, trustedCa);
  try {
    return { ...options, ca: (await readNamedFile(resolved, loaded.files)).toString('utf8') };
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ConfigError([
      await problemAt(
        loaded.file,
        ['auth', 'clientMetadataDocuments', 'trustedCa'],
        `cannot read ${resolved} (${reason})`,
      ),
    ]);
  }
}

/** The scopes get-authorization-context's user-delegated connections need (identities.credentialProviders). */
function delegatedScopes(config: LoadedConfig['config']): string[] {
  return Object.values(config.identities?.credentialProviders ?? {}).flatMap((provider) =>
    Object.values(provider.connections).flatMap((connection) =>
      'delegated' in connection ? connection.scopes : [],
    ),
  );
}

/** The upstream OpenID Connect provider's options, with its client secret read from the environment if named there. */
async function identityProvider(
  loaded: LoadedConfig,
  config: NonNullable<AuthConfig['identityProvider']>,
  /** Asked for besides the provider's own scopes: the user consents once for every delegated connection. */
  extraScopes: readonly string[],
): Promise<UpstreamProviderOptions> {
  let clientSecret = config.clientSecret;
  if (typeof clientSecret !== 'string') {
    const value = process.env[clientSecret.env];
    if (!value) {
      throw new ConfigError([
        await problemAt(
          loaded.file,
          ['auth', 'identityProvider', 'clientSecret', 'env'],
          `environment variable ${clientSecret.env} is not set (it holds the identity provider's client secret)`,
        ),
      ]);
    }
    clientSecret = value;
  }
  return {
    id: config.id,
    issuer: config.issuer,
    clientId: config.clientId,
    clientSecret,
    scopes: [...new Set([...config.scopes, ...extraScopes])],
    ...(config.name ? { name: config.name } : {}),
  };
}
