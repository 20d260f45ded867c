import { createLocalJWKSet, type JWK, jwtVerify } from 'jose';
import { mcpResourceUrl } from '../config/mcp-servers.js';
import type { GatewayConfig } from '../config/schema.js';
import { firstHeader, type HeaderFields } from '../extproc/headers.js';

/**
 * The authorization server in front of each MCP server API's own URL, `/<urlSuffix>/mcp` (MCP authorization,
 * 2025-06-18 and later: the gateway is the resource server): a request needs an access token from the AS, audience
 * that URL (RFC 8707), with one of the scopes of the API's products; a request without one is 401 with the RFC 9728
 * `resource_metadata` the service publishes, one with too little scope 403 `insufficient_scope`. The token is checked
 * here, before any policy, with the AS's published keys (signature, issuer, audience, expiry): the engine does not
 * ask the AS, so a revoked token is accepted until it expires (access tokens are short-lived). The token is the
 * client's credential for the gateway, never forwarded upstream (mcp-access is what `forward` strips).
 */
export type McpAccessResult =
  | { readonly kind: 'not-protected' }
  | {
      readonly kind: 'allowed';
      readonly authorization: string;
      /** The token's scopes: the write rule (mcp-tools.ts) decides each call and listing by them. */
      readonly scopes: readonly string[];
    }
  | {
      readonly kind: 'refused';
      readonly status: 401 | 403;
      /** The bearer challenge; none for a Host or Origin the endpoint does not serve (no token would help). */
      readonly challenge?: string;
      readonly message: string;
    };

export interface McpAccess {
  check(apiId: string, headers: HeaderFields): Promise<McpAccessResult>;
}

interface Protected {
  readonly resource: string;
  readonly metadata: string;
  readonly scopes: readonly string[];
}

/** Keys read again at most this often, so a rotation the service made is followed. */
const KEY_REFRESH_MS = 30_000;

/**
 * The check for every MCP API of a configuration; undefined when it has none. Without `auth` (or without keys the
 * engine can read: the config check `mcp-servers` refuses that combination) only the Host/Origin check applies.
 */
export function mcpAccessOf(
  config: GatewayConfig,
  keys: (() => Promise<JWK[]>) | undefined,
): McpAccess | undefined {
  const mcpApis = new Set(config.apis.filter((api) => api.type === 'mcp').map((api) => api.id));
  if (mcpApis.size === 0) return undefined;
  const auth = config.auth;
  const admits = hostAndOrigin(config, auth ? new URL(auth.baseUrl).origin : undefined);
  // DNS-rebinding protection does not depend on auth: a page that rebinds a name to the gateway reaches an
  // unprotected server just as well.
  if (!auth || !keys)
    return {
      async check(apiId, headers) {
        if (!mcpApis.has(apiId)) return { kind: 'not-protected' };
        const foreign = admits(headers);
        return foreign ? { kind: 'refused', status: 403, message: foreign } : { kind: 'not-protected' };
      },
    };
  const apis = new Map<string, Protected>();
  for (const api of config.apis) {
    if (api.type !== 'mcp') continue;
    const products = config.products.filter((p) => p.apis.includes(api.id)).map((p) => p.id);
    const resource = mcpResourceUrl(auth.baseUrl, api.urlSuffix);
    const url = new URL(resource);
    apis.set(api.id, {
      resource,
      metadata: `${url.origin}/.well-known/oauth-protected-resource${url.pathname}`,
      scopes: products.flatMap((p) => [`read:${p}-work`, `write:${p}-work`]),
    });
  }
  let keySet: { read: number; verify: ReturnType<typeof createLocalJWKSet> } | undefined;
  const verifier = async () => {
    if (!keySet || Date.now() - keySet.read > KEY_REFRESH_MS) {
      // The private keys the AS signs with, as public ones.
      const published = (await keys()).map(
        ({ d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub }) => pub,
      );
      keySet = { read: Date.now(), verify: createLocalJWKSet({ keys: published }) };
    }
    return keySet.verify;
  };
  return {
    async check(apiId, headers) {
      const api = apis.get(apiId);
      if (!api) return { kind: 'not-protected' };
      const foreign = admits(headers);
      if (foreign) return { kind: 'refused', status: 403, message: foreign };
      const scope = api.scopes.join(' ');
      const authorization = firstHeader(headers, 'authorization') ?? '';
      const token = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization)?.[1];
      if (!token)
        return {
          kind: 'refused',
          status: 401,
          challenge: `Bearer scope="${scope}", resource_metadata="${api.metadata}"`,
          message: "This MCP server needs an access token from the gateway's authorization server.",
        };
      let granted: string[];
      try {
        const { payload } = await jwtVerify(token, await verifier(), {
          issuer: auth.issuer,
          audience: api.resource,
          clockTolerance: 5,
        });
        granted = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
      } catch {
        return {
          kind: 'refused',
          status: 401,
          challenge: `Bearer error="invalid_token", scope="${scope}", resource_metadata="${api.metadata}"`,
          message: 'The access token is missing, expired or not for this MCP server.',
        };
      }
      if (!api.scopes.some((s) => granted.includes(s)))
        return {
          kind: 'refused',
          status: 403,
          challenge: `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${api.metadata}"`,
          message: "The access token has none of the scopes of this MCP server's products.",
        };
      return { kind: 'allowed', authorization, scopes: granted };
    },
  };
}

/** The names a loopback or wildcard listener is reached by from a browser on the same machine. */
const LOCAL_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * The origins of the gateway's own pages: `auth.baseUrl`'s, those of its listeners (`gateway.http`, `tls`; a
 * wildcard or loopback listener by its local names) and, on any port, the API host names (`apis[].hostnames`).
 */
function ownOrigins(config: GatewayConfig, baseOrigin: string | undefined) {
  const origins = new Set<string>(baseOrigin ? [baseOrigin] : []);
  const names = (host: string) =>
    ['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(host)
      ? LOCAL_NAMES
      : [host.includes(':') ? `[${host}]` : host];
  const listeners: [string, string, number][] = [
    ['http', config.gateway.http.host, config.gateway.http.port],
  ];
  if (config.tls) listeners.push(['https', config.gateway.http.host, config.tls.port]);
  for (const [scheme, host, port] of listeners)
    for (const name of names(host)) origins.add(new URL(`${scheme}://${name}:${port}`).origin);
  const hostnames = new Set(config.apis.flatMap((api) => api.hostnames ?? []).map((h) => h.toLowerCase()));
  return { origins, hostnames };
}

/**
 * DNS-rebinding protection, as at `/v1/mcp` (mcp/koa.ts) and as the transport spec asks of every server: a `Host` not
 * in `mcp.allowedHosts` (when it is set), or an `Origin` that is neither the gateway's own (ownOrigins), one of
 * `mcp.allowedOrigins`, nor on an allowed host, is refused before anything reaches the server. The message, or
 * undefined when the request may go on.
 */
function hostAndOrigin(
  config: GatewayConfig,
  baseOrigin: string | undefined,
): (headers: HeaderFields) => string | undefined {
  const mcp = config.mcp;
  const own = ownOrigins(config, baseOrigin);
  const origins = new Set([...own.origins, ...(mcp?.allowedOrigins ?? [])]);
  const hosts = mcp?.allowedHosts ? new Set(mcp.allowedHosts.map((h) => h.toLowerCase())) : undefined;
  return (headers) => {
    const host = (firstHeader(headers, ':authority') ?? '').toLowerCase();
    if (hosts && !hosts.has(host)) return `Forbidden: Host ${JSON.stringify(host)} is not allowed`;
    const origin = firstHeader(headers, 'origin');
    if (origin === undefined || origins.has(origin)) return undefined;
    const originUrl = URL.canParse(origin) ? new URL(origin) : undefined;
    const sameSite =
      originUrl &&
      /^https?:$/.test(originUrl.protocol) &&
      (hosts?.has(originUrl.host.toLowerCase()) || own.hostnames.has(originUrl.hostname.toLowerCase()));
    return sameSite ? undefined : `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`;
  };
}
