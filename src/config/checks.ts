import type { z } from 'zod';
import { compileUrlTemplate, UrlTemplateError } from '../catalog/url-template.js';
import { stateBackendKind } from '../state/options.js';
import { backendIssues } from './backend-schema.js';
import { mcpServerIssues } from './mcp-servers.js';
import { placementIssues } from './network-placement.js';
import type { GatewayConfig } from './schema.js';

/**
 * The rules that span sections of the gateway configuration, one named check each, in one table. The loader runs
 * them all after the sections' own schemas (so `portcullis validate`, `up`, the engine, the service and the
 * management API refuse the same files, each problem at its file:line:col); a new rule is one more entry here.
 */

/** One problem a check found: the key path it is about (located in the file by the loader) and what is wrong. */
export interface CrossFieldIssue {
  readonly path: (string | number)[];
  readonly message: string;
}

export interface CrossCheck {
  /** Says what the rule is, e.g. `unique-api-ids`. */
  readonly name: string;
  readonly issues: (config: GatewayConfig) => Iterable<CrossFieldIssue>;
}

/** The AS accepts product ids as scope parts only in this shape; the gateway's own id rule is looser. */
export const SCOPE_PRODUCT = /^[a-z0-9][a-z0-9._-]{0,62}$/i;

function* uniqueApiIds(config: GatewayConfig): Iterable<CrossFieldIssue> {
  const seen = new Map<string, number>();
  for (const [index, api] of config.apis.entries()) {
    const previous = seen.get(api.id);
    if (previous !== undefined) {
      yield { path: ['apis', index, 'id'], message: `duplicate API id "${api.id}" (also apis[${previous}])` };
    }
    seen.set(api.id, index);
  }
}

/** One API per URL suffix and hosts, except the versions of one header- or query-versioned set, which share it. */
function* uniqueUrlSuffixes(config: GatewayConfig): Iterable<CrossFieldIssue> {
  const seen = new Map<string, number>();
  for (const [index, api] of config.apis.entries()) {
    const key = `${(api.hostnames ?? ['*']).join(',')}/${api.urlSuffix}`;
    const previous = seen.get(key);
    const set = sharingSetOf(config, api);
    if (
      previous !== undefined &&
      (set === undefined || sharingSetOf(config, config.apis[previous]!) !== set)
    ) {
      yield {
        path: ['apis', index, 'urlSuffix'],
        message: `URL suffix "${api.urlSuffix}" is already used by apis[${previous}] on the same hosts (only versions of one header- or query-versioned set share a suffix)`,
      };
    }
    seen.set(key, index);
  }
}

function* subscriptionReferences(config: GatewayConfig): Iterable<CrossFieldIssue> {
  const productIds = new Set(config.products.map((product) => product.id));
  const apiIds = new Set(config.apis.map((api) => api.id));
  const userIds = new Set(config.users.map((user) => user.id));
  for (const [index, subscription] of config.subscriptions.entries()) {
    const scope = subscription.scope;
    if (scope !== 'all' && 'product' in scope && !productIds.has(scope.product)) {
      yield {
        path: ['subscriptions', index, 'scope', 'product'],
        message: `no product with id "${scope.product}"`,
      };
    }
    if (scope !== 'all' && 'api' in scope && !apiIds.has(scope.api)) {
      yield { path: ['subscriptions', index, 'scope', 'api'], message: `no API with id "${scope.api}"` };
    }
    if (subscription.user !== undefined && !userIds.has(subscription.user)) {
      yield { path: ['subscriptions', index, 'user'], message: `no user with id "${subscription.user}"` };
    }
  }
}

function* uniqueSubscriptionKeys(config: GatewayConfig): Iterable<CrossFieldIssue> {
  const owners = new Map<string, string>();
  for (const [index, subscription] of config.subscriptions.entries()) {
    for (const field of ['primaryKey', 'secondaryKey'] as const) {
      const key = subscription[field];
      if (key === undefined) continue;
      const owner = owners.get(key);
      // The message never repeats the key: it is a credential.
      if (owner !== undefined) {
        yield { path: ['subscriptions', index, field], message: `this key is already used by ${owner}` };
      }
      owners.set(key, `subscriptions[${index}].${field}`);
    }
  }
}

function* userGroups(config: GatewayConfig): Iterable<CrossFieldIssue> {
  const groupIds = new Set(config.groups.map((group) => group.id));
  for (const [index, user] of config.users.entries()) {
    for (const [groupIndex, group] of user.groups.entries()) {
      if (!groupIds.has(group)) {
        yield { path: ['users', index, 'groups', groupIndex], message: `no group with id "${group}"` };
      }
    }
  }
}

function* oneOpenProductPerApi(config: GatewayConfig): Iterable<CrossFieldIssue> {
  for (const [index, api] of config.apis.entries()) {
    const open = config.products.filter(
      (product) => !product.subscriptionRequired && product.apis.includes(api.id),
    );
    if (open.length > 1) {
      yield {
        path: ['apis', index, 'id'],
        message: `API "${api.id}" is in ${open.length} open products (${open.map((product) => product.id).join(', ')}); at most one may admit it without a key`,
      };
    }
  }
}

function* productApis(config: GatewayConfig): Iterable<CrossFieldIssue> {
  const apiIds = new Set(config.apis.map((api) => api.id));
  for (const [index, product] of config.products.entries()) {
    for (const [apiIndex, apiId] of product.apis.entries()) {
      if (!apiIds.has(apiId)) {
        yield {
          path: ['products', index, 'apis', apiIndex],
          message: `no API with id "${apiId}" (known: ${[...apiIds].join(', ') || 'none'})`,
        };
      }
    }
  }
}

function* managementListener(config: GatewayConfig): Iterable<CrossFieldIssue> {
  const management = config.management;
  if (management?.listen && config.network.mode !== 'none') {
    yield {
      path: ['management', 'listen'],
      message: `in ${config.network.mode} mode the management listener binds network.managementPort on the gateway's addresses; remove management.listen`,
    };
  }
  const listenPort = management?.listen?.port ?? 3443;
  if (management && config.network.mode === 'none' && listenPort !== 0) {
    const taken = [config.gateway.http.port, config.tls?.port].filter((p) => p !== undefined && p !== 0);
    if (taken.includes(listenPort)) {
      yield {
        path: ['management', 'listen', 'port'],
        message: `the management listener needs its own port; ${listenPort} is a gateway port`,
      };
    }
  }
}

function* mcpNeedsAuth(config: GatewayConfig): Iterable<CrossFieldIssue> {
  if (config.mcp && !config.auth) {
    yield {
      path: ['mcp'],
      message: 'the MCP endpoint needs an "auth" section (its tokens come from the authorization server)',
    };
  }
}

/** Scopes are `read:<product>-work` / `write:<product>-work`: the AS needs products whose ids can name one. */
function* productsNameScopes(config: GatewayConfig): Iterable<CrossFieldIssue> {
  if (!config.auth) return;
  if (config.products.length === 0) {
    yield {
      path: ['auth'],
      message:
        'scopes are read:<product>-work and write:<product>-work: add at least one entry to "products"',
    };
  }
  for (const [index, product] of config.products.entries()) {
    if (!SCOPE_PRODUCT.test(product.id)) {
      yield {
        path: ['products', index, 'id'],
        message: `must start with a letter or digit and have at most 63 characters to name a scope, got "${product.id}"`,
      };
    }
  }
}

/**
 * With state.dataDir (and no Redis) grants and refresh tokens outlive a restart; keys generated anew at each start
 * would not, so every access token issued before a restart would stop verifying. The private keys are files, never
 * records of the store: auth.dataDir keeps the generated ones, or signingKeys.file names them.
 */
function* durableSigningKeys(config: GatewayConfig): Iterable<CrossFieldIssue> {
  const { auth, state } = config;
  if (!auth || stateBackendKind(state) !== 'embedded') return;
  if (auth.dataDir !== undefined || auth.signingKeys?.file !== undefined) return;
  yield {
    path: ['auth'],
    message:
      'state.dataDir keeps grants and refresh tokens across restarts, but the signing keys would be generated anew at each start ' +
      '(access tokens issued before a restart would stop verifying): set auth.dataDir (the keys are kept there as files) ' +
      'or auth.signingKeys.file',
  };
}

/**
 * The `portcullis` identity signs with the authorization server's keys, which the engine reads from where the AS
 * keeps them: a keys file, or auth.dataDir. Keys the service generates and holds only in memory cannot be shared.
 */
function* portcullisIdentity(config: GatewayConfig): Iterable<CrossFieldIssue> {
  const { identities, auth } = config;
  if (!identities) return;
  const named = Object.entries(identities.sources).filter(([, source]) => source.type === 'portcullis');
  const places: (string | number)[][] = named.map(([name]) => ['identities', 'sources', name]);
  if (identities.default === 'portcullis' && !('portcullis' in identities.sources))
    places.push(['identities', 'default']);
  for (const path of places) {
    if (!auth)
      yield {
        path,
        message: 'the portcullis identity is minted by the authorization server: configure auth',
      };
    else if (auth.dataDir === undefined && auth.signingKeys?.file === undefined)
      yield {
        path,
        message:
          "the portcullis identity signs with the authorization server's keys, which the engine reads from auth.signingKeys.file " +
          'or auth.dataDir: set one of them (keys generated in memory stay in the service process)',
      };
  }
}

/**
 * A user-delegated connection reads the upstream tokens the authorization server kept at sign-in: it needs the
 * upstream provider, the key both processes seal them with, and a store both reach (the engine and the service
 * are separate processes).
 */
function* delegatedConnections(config: GatewayConfig): Iterable<CrossFieldIssue> {
  const { identities, auth, state } = config;
  if (!identities) return;
  for (const [provider, { connections }] of Object.entries(identities.credentialProviders)) {
    for (const [id, connection] of Object.entries(connections)) {
      if (!('delegated' in connection)) continue;
      const path = ['identities', 'credentialProviders', provider, 'connections', id];
      const missing = [
        ...(auth?.identityProvider ? [] : ['auth.identityProvider (users sign in through it)']),
        ...(identities.delegatedTokenKey ? [] : ['identities.delegatedTokenKey (seals the kept tokens)']),
        ...(stateBackendKind(state) !== 'memory'
          ? []
          : ['state.dataDir or state.redis (where the service keeps them for the engine)']),
      ];
      if (missing.length > 0) yield { path, message: `a delegated connection needs ${missing.join(', ')}` };
      return;
    }
  }
}

/**
 * Each operation's URL template compiles, and no two operations of an API answer the same method and template —
 * API Management refuses the second as a duplicate; here the matcher would silently route every call to one of
 * them. Templates are the same when they differ only in parameter names or in the case of literal segments; SOAP
 * operations, which share one endpoint, differ by their SOAP action or body element.
 */
function* operationUrlTemplates(config: GatewayConfig): Iterable<CrossFieldIssue> {
  for (const [apiIndex, api] of config.apis.entries()) {
    const seen = new Map<string, number>();
    for (const [index, operation] of api.operations.entries()) {
      const path = ['apis', apiIndex, 'operations', index, 'urlTemplate'];
      try {
        compileUrlTemplate(operation.urlTemplate);
      } catch (error) {
        if (!(error instanceof UrlTemplateError)) throw error;
        yield { path, message: error.message };
        continue;
      }
      // SOAP operations share one endpoint (POST /) and are told apart by their SOAP action or body element.
      const soap = operation.soap === undefined ? '' : ` ${JSON.stringify(operation.soap)}`;
      const key = `${operation.method.toUpperCase()} ${templateShape(operation.urlTemplate)}${soap}`;
      const previous = seen.get(key);
      if (previous !== undefined) {
        yield {
          path,
          message: `${operation.method.toUpperCase()} "${operation.urlTemplate}" is the same operation as apis[${apiIndex}].operations[${previous}] ("${api.operations[previous]!.urlTemplate}")`,
        };
      }
      seen.set(key, index);
    }
  }
}

/** A template with its parameter names left out and its literal path segments in lower case (they match so). */
function templateShape(template: string): string {
  const [pathPart = '', queryPart] = template.split('?', 2);
  const shapedPath = pathPart
    .split('/')
    .map((segment) =>
      /[{}]/.test(segment) ? segment.replace(/\{(\*?)[^}]*\}/g, '{$1}') : segment.toLowerCase(),
    )
    .join('/');
  const shapedQuery = (queryPart ?? '')
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => pair.replace(/=\{[^}]*\}$/, '={}'))
    .sort();
  return shapedQuery.length > 0 ? `${shapedPath}?${shapedQuery.join('&')}` : shapedPath;
}

/**
 * An API's version names a declared version set, once per set. Path versioning shows in the URL suffix; header and
 * query versioning share the set's one URL suffix (the first version's), which is how API Management serves them.
 */
function* apiVersions(config: GatewayConfig): Iterable<CrossFieldIssue> {
  const sets = new Map(config.versionSets.map((set) => [set.id, set]));
  const taken = new Map<string, number>();
  const sharedSuffix = new Map<string, number>();
  for (const [index, api] of config.apis.entries()) {
    if (!api.version) continue;
    const { set: setId, name } = api.version;
    const set = sets.get(setId);
    if (!set) {
      const known = [...sets.keys()].join(', ') || 'none';
      yield {
        path: ['apis', index, 'version', 'set'],
        message: `no version set "${setId}" (known: ${known})`,
      };
      continue;
    }
    const key = `${setId}\u0000${name}`;
    const previous = taken.get(key);
    if (previous !== undefined) {
      yield {
        path: ['apis', index, 'version', 'name'],
        message: `version "${name}" of "${setId}" is already apis[${previous}]`,
      };
    }
    taken.set(key, index);
    if (set.scheme === 'path') {
      if (name !== '' && api.urlSuffix !== name && !api.urlSuffix.endsWith(`/${name}`)) {
        yield {
          path: ['apis', index, 'urlSuffix'],
          message: `path versioning: the URL suffix must end with the version "/${name}", got "${api.urlSuffix}"`,
        };
      }
      continue;
    }
    const first = sharedSuffix.get(setId);
    if (first === undefined) sharedSuffix.set(setId, index);
    else if (config.apis[first]!.urlSuffix !== api.urlSuffix) {
      yield {
        path: ['apis', index, 'urlSuffix'],
        message: `${set.scheme} versioning: every version of "${setId}" has the URL suffix of apis[${first}] ("${config.apis[first]!.urlSuffix}"), got "${api.urlSuffix}"`,
      };
    }
  }
}

/** The version set an API is a version of when that set tells versions apart by header or query (shared suffix). */
function sharingSetOf(config: GatewayConfig, api: GatewayConfig['apis'][number]): string | undefined {
  if (!api.version) return undefined;
  const set = config.versionSets.find((candidate) => candidate.id === api.version!.set);
  return set && set.scheme !== 'path' ? set.id : undefined;
}

/** Every cross-field rule, in the order their problems are reported. */
export const crossChecks: readonly CrossCheck[] = [
  { name: 'api-versions', issues: apiVersions },
  { name: 'unique-api-ids', issues: uniqueApiIds },
  { name: 'unique-url-suffixes', issues: uniqueUrlSuffixes },
  { name: 'operation-url-templates', issues: operationUrlTemplates },
  { name: 'subscription-references', issues: subscriptionReferences },
  { name: 'unique-subscription-keys', issues: uniqueSubscriptionKeys },
  { name: 'user-groups', issues: userGroups },
  { name: 'one-open-product-per-api', issues: oneOpenProductPerApi },
  { name: 'product-apis', issues: productApis },
  { name: 'management-listener', issues: managementListener },
  { name: 'network-placement', issues: placementIssues },
  { name: 'mcp-needs-auth', issues: mcpNeedsAuth },
  { name: 'mcp-servers', issues: mcpServerIssues },
  { name: 'products-name-scopes', issues: productsNameScopes },
  { name: 'durable-signing-keys', issues: durableSigningKeys },
  { name: 'portcullis-identity', issues: portcullisIdentity },
  { name: 'delegated-connections', issues: delegatedConnections },
  {
    name: 'backend-references',
    issues: (config) => backendIssues(config.backends, Object.keys(config.tls?.certificates ?? {})),
  },
];

/** For the root schema (`.superRefine(runCrossChecks)`): every check's issues, as zod issues at their key paths. */
export function runCrossChecks(config: GatewayConfig, ctx: z.RefinementCtx): void {
  for (const check of crossChecks) {
    for (const issue of check.issues(config)) {
      ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    }
  }
}
