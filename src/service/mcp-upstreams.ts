import type { Tool } from '@modelcontextprotocol/client';
import { decodeJwt } from 'jose';
import type Koa from 'koa';
import { mcpResourceUrl, toolMatcher, toolPrefixOf } from '../config/mcp-servers.js';
import type { GatewayConfig } from '../config/schema.js';
import {
  productScope,
  type Subject,
  type UpstreamCatalog,
  type UpstreamRouter,
  type UpstreamServer,
} from '../mcp/index.js';
import type { ServiceTokenMinter } from './gateway-caller.js';

type McpSource = Pick<GatewayConfig, 'apis' | 'products'>;

/** The service's view of the MCP server APIs, which a configuration reload replaces. */
export interface ConfigUpstreamCatalog extends UpstreamCatalog {
  /** Makes the servers those of `config`; listeners are told only when they differ. */
  replace(config: McpSource): void;
}

/**
 * Every API of type `mcp` that is in at least one product (the scopes come from products, as for the REST-API tools):
 * its tool filter and write rule compiled once.
 */
export function upstreamServers(config: McpSource): UpstreamServer[] {
  return config.apis.flatMap((api) => {
    if (api.type !== 'mcp') return [];
    const productIds = config.products.filter((p) => p.apis.includes(api.id)).map((p) => p.id);
    if (productIds.length === 0) return [];
    const exposed = api.mcp?.tools ? toolMatcher(api.mcp.tools) : () => true;
    const writeRule = api.mcp?.writeTools ?? 'annotations';
    const listedWrite = writeRule === 'annotations' ? undefined : toolMatcher(writeRule);
    return [
      Object.freeze({
        apiId: api.id,
        name: api.name ?? api.id,
        prefix: toolPrefixOf(api),
        productIds,
        exposes: exposed,
        // With annotations, only a tool the server marks read-only is a read tool: an unmarked one may write.
        needsWrite: listedWrite
          ? (tool: Tool) => listedWrite(tool.name)
          : (tool: Tool) => tool.annotations?.readOnlyHint !== true,
      }),
    ];
  });
}

/** What decides an MCP API's servers: compared to tell a reload that changed them from one that did not. */
function fingerprint(config: McpSource): string {
  return JSON.stringify(
    config.apis
      .filter((api) => api.type === 'mcp')
      .map((api) => [
        api.id,
        api.name,
        api.urlSuffix,
        api.mcp,
        config.products.filter((p) => p.apis.includes(api.id)).map((p) => p.id),
      ]),
  );
}

export function configUpstreamCatalog(config: McpSource): ConfigUpstreamCatalog {
  let servers = upstreamServers(config);
  let current = fingerprint(config);
  const listeners = new Set<() => void>();
  return {
    servers: () => servers,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    replace(next) {
      const nextFingerprint = fingerprint(next);
      if (nextFingerprint === current) return;
      servers = upstreamServers(next);
      current = nextFingerprint;
      for (const listener of [...listeners]) listener();
    },
  };
}

export interface GatewayUpstreamRouterOptions {
  /** Where this process reaches Envoy's gateway listener (an origin). */
  readonly gatewayUrl: string;
  /** `auth.baseUrl`: the MCP APIs' own URLs, the audience the engine checks (engine/mcp-access.ts), start with it. */
  readonly resourceBase: string;
  readonly urlSuffixes: (apiId: string) => string | undefined;
  readonly mint: ServiceTokenMinter;
  readonly tokenTtlSeconds?: number;
}

/**
 * Upstream sessions go through the gateway, to the MCP API's own URL `/<urlSuffix>/mcp`, so Envoy and the engine run
 * the API's policies on every message (rate limits per tool, the credential a `set-header` injects from a named
 * value). The credential is a service token minted for the user (one per upstream session, renewed at half its
 * lifetime) (audience the MCP API's own URL, as the
 * engine checks for any client of it; scope the user's scopes for the API's products): the user's own token never leaves the MCP endpoint.
 */
export function gatewayUpstreamRouter(options: GatewayUpstreamRouterOptions): UpstreamRouter {
  const gateway = new URL(options.gatewayUrl);
  return (server: UpstreamServer, subject: Subject) => {
    const suffix = options.urlSuffixes(server.apiId);
    if (suffix === undefined) throw new Error(`MCP server API "${server.apiId}" is not in the configuration`);
    const url = new URL(`/${suffix}`, gateway);
    const scope = server.productIds
      .flatMap((p) => [productScope(p, true), productScope(p, false)])
      .filter((s) => subject.scopes.includes(s));
    const audience = mcpResourceUrl(options.resourceBase, suffix);
    // One token per upstream session, minted again once half its lifetime has passed (not one signature per message;
    // the AS may cap the lifetime below mcp.serviceTokenTtlSeconds, so the token's own claims say when).
    let minted: { token: string; renewAt: number } | undefined;
    const token = async () => {
      if (minted && Date.now() < minted.renewAt) return minted.token;
      const fresh = await options.mint({
        subject: subject.sub,
        audience,
        scope,
        ...(options.tokenTtlSeconds ? { ttlSeconds: options.tokenTtlSeconds } : {}),
      });
      const { iat, exp } = decodeJwt(fresh);
      const renewAt = iat !== undefined && exp !== undefined ? ((iat + exp) / 2) * 1000 : 0;
      minted = { token: fresh, renewAt };
      return fresh;
    };
    const routed: typeof fetch = async (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${await token()}`);
      headers.set('user-agent', 'portcullis-mcp');
      return fetch(input, { ...init, headers });
    };
    return { url, fetch: routed };
  };
}

/**
 * The RFC 9728 protected resource metadata of each MCP server API's own URL, at
 * `/.well-known/oauth-protected-resource/<urlSuffix>/mcp` (the path-inserted form the engine's 401 names): this
 * authorization server, and the scopes of the API's products.
 */
export function mcpServerMetadata(options: {
  readonly issuer: string;
  readonly baseUrl: string;
  readonly apis: () => McpSource;
}): Koa.Middleware {
  const prefix = '/.well-known/oauth-protected-resource/';
  return async (ctx, next) => {
    if (!ctx.path.startsWith(prefix) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const config = options.apis();
    const api = config.apis.find(
      (candidate) => candidate.type === 'mcp' && ctx.path === `${prefix}${candidate.urlSuffix}`,
    );
    if (!api) return next();
    const products = config.products.filter((p) => p.apis.includes(api.id)).map((p) => p.id);
    ctx.set('cache-control', 'public, max-age=300');
    ctx.set('access-control-allow-origin', '*');
    ctx.type = 'application/json';
    ctx.body = {
      resource: mcpResourceUrl(options.baseUrl, api.urlSuffix),
      authorization_servers: [options.issuer],
      scopes_supported: products.flatMap((p) => [productScope(p, true), productScope(p, false)]).sort(),
      bearer_methods_supported: ['header'],
      resource_name: api.name ?? api.id,
    };
  };
}
