import http from 'node:http';
import https from 'node:https';
import { context, propagation, trace } from '@opentelemetry/api';
import { type ApiVersionSelector, apiVersionSelector } from '../config/api-versions.js';
import type { ApiConfig, GatewayConfig } from '../config/schema.js';
import {
  type GatewayCaller,
  type GatewayResponse,
  productScope,
  type Subject,
  type ToolCallRequest,
  type ToolOperation,
} from '../mcp/index.js';

/** Mints the credential the gateway sees instead of the user's token (the AS's `mintServiceToken`). */
export type ServiceTokenMinter = (input: {
  subject: string;
  audience: string;
  scope: string[];
  ttlSeconds?: number;
}) => Promise<string>;

export interface GatewayCallerOptions {
  /** Where this process reaches Envoy's gateway listener, e.g. `http://127.0.0.1:8080`. */
  readonly gatewayUrl: string;
  /** Prefix of the service token's audience: `<audienceBase>/<urlSuffix>`. Default `gatewayUrl`. */
  readonly audienceBase?: string;
  readonly apis: readonly CallerApi[];
  readonly mint: ServiceTokenMinter;
  readonly tokenTtlSeconds?: number;
  /** Per call, headers to body end. */
  readonly timeoutMs?: number;
  /** Larger gateway answers are refused rather than held in memory. */
  readonly maxResponseBytes?: number;
}

/**
 * What the caller needs of an API to reach it through the gateway: for a version of a header- or query-versioned
 * set, also how a request names the version (its URL suffix is the other versions' too).
 */
export type CallerApi = Pick<ApiConfig, 'id' | 'urlSuffix' | 'hostnames'> & {
  readonly versionSelector?: ApiVersionSelector | undefined;
};

/** The configuration's APIs as the caller needs them. */
export function callerApis(config: GatewayConfig): CallerApi[] {
  return config.apis.map((api) => ({
    id: api.id,
    urlSuffix: api.urlSuffix,
    ...(api.hostnames ? { hostnames: api.hostnames } : {}),
    versionSelector: apiVersionSelector(config, api),
  }));
}

/** A gateway caller whose APIs follow the configuration of a running service. */
export interface ConfigGatewayCaller extends GatewayCaller {
  /**
   * From now on, calls go to the routes of `apis` (a call already sending keeps the route it started with). An
   * API that is gone makes its tool calls fail until the catalog, replaced next, drops the tool.
   */
  replaceApis(apis: readonly CallerApi[]): void;
}

/** The audience of the service tokens sent to one API: its URL on the gateway. */
export function apiAudience(base: string, urlSuffix: string): string {
  return `${base.replace(/\/+$/, '')}/${urlSuffix}`;
}

interface Route {
  readonly pathPrefix: string;
  readonly audience: string;
  /** The `Host` Envoy needs to pick the API's virtual host, when the API is bound to host names. */
  readonly host?: string;
  readonly versionSelector?: ApiVersionSelector | undefined;
}

/**
 * Sends tool calls through Envoy's gateway listener, so the API's policies apply exactly as for any client.
 * The credential is a short-lived token minted for this call: subject the user, audience the API's gateway URL,
 * scope the user's scopes that grant this operation. The user's own access token never leaves the MCP endpoint.
 */
export function createGatewayCaller(options: GatewayCallerOptions): ConfigGatewayCaller {
  const gateway = new URL(options.gatewayUrl);
  if (gateway.pathname !== '/' || gateway.search || gateway.hash) {
    throw new TypeError(`gateway caller: gatewayUrl must be an origin, got ${options.gatewayUrl}`);
  }
  const transport = gateway.protocol === 'https:' ? https : http;
  // Tool calls are many small requests to one listener: keep connections open.
  const agent = new transport.Agent({ keepAlive: true, maxSockets: 64 });
  const audienceBase = options.audienceBase ?? gateway.origin;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxResponseBytes = options.maxResponseBytes ?? 8 * 1024 * 1024;
  const routesOf = (apis: readonly CallerApi[]): ReadonlyMap<string, Route> =>
    new Map(
      apis.map((api) => [
        api.id,
        {
          pathPrefix: `/${api.urlSuffix}`,
          audience: apiAudience(audienceBase, api.urlSuffix),
          ...(api.hostnames ? { host: api.hostnames[0] } : {}),
          versionSelector: api.versionSelector,
        },
      ]),
    );
  // Replaced whole, never edited: a lookup sees one configuration's routes.
  let routes = routesOf(options.apis);

  return {
    replaceApis(apis) {
      routes = routesOf(apis);
    },
    async call(op: ToolOperation, request: ToolCallRequest, subject: Subject): Promise<GatewayResponse> {
      const route = routes.get(op.apiId);
      if (!route) throw new Error(`gateway caller: no API "${op.apiId}" in the configuration`);
      const readOnly = op.method === 'GET' || op.method === 'HEAD';
      // Only the scopes that grant this operation: the gateway learns no more about the user than it needs.
      const scope = op.productIds
        .map((p) => productScope(p, readOnly))
        .filter((s) => subject.scopes.includes(s));
      const token = await options.mint({
        subject: subject.sub,
        audience: route.audience,
        scope,
        ...(options.tokenTtlSeconds ? { ttlSeconds: options.tokenTtlSeconds } : {}),
      });
      const body = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
      const headers: Record<string, string> = {
        // The endpoint's schema layer already refuses reserved header names as tool arguments.
        ...request.headers,
        host: route.host ?? gateway.host,
        authorization: `Bearer ${token}`,
        accept: 'application/json, */*;q=0.5',
        'user-agent': 'portcullis-mcp',
      };
      const version = route.versionSelector;
      let path = `${route.pathPrefix}${request.path}`;
      // The gateway picks this version of the ones sharing the suffix by what the request names; the Original ("")
      // by naming none, so a tool argument of that name must not pick another one.
      if (version?.by === 'header') {
        for (const name of Object.keys(headers))
          if (name.toLowerCase() === version.key.toLowerCase()) delete headers[name];
        if (version.name !== '') headers[version.key] = version.name;
      }
      if (version?.by === 'query') path = withVersionQuery(path, version.key, version.name);
      // A traced service (telemetry.otlp): the call through the gateway continues the tool call's trace.
      if (trace.getSpan(context.active())) propagation.inject(context.active(), headers);
      if (body) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(body.length);
      }
      return send(
        transport,
        {
          protocol: gateway.protocol,
          hostname: gateway.hostname.replace(/^\[|\]$/g, ''),
          port: gateway.port,
          method: op.method,
          path,
          headers,
          agent,
          ...(route.host ? { servername: route.host.replace(/:\d+$/, '') } : {}),
        },
        body,
        timeoutMs,
        maxResponseBytes,
      );
    },
  };
}

/**
 * `path` with the version query parameter set to `name` (none for the Original version ""). The other parameters
 * stay as the tool wrote them: only pairs named `key` are dropped.
 */
function withVersionQuery(path: string, key: string, name: string): string {
  const queryStart = path.indexOf('?');
  const pathOnly = queryStart < 0 ? path : path.slice(0, queryStart);
  const pairs = (queryStart < 0 ? '' : path.slice(queryStart + 1))
    .split('&')
    .filter((pair) => pair !== '' && new URLSearchParams(pair).keys().next().value !== key);
  if (name !== '') pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(name)}`);
  return pairs.length === 0 ? pathOnly : `${pathOnly}?${pairs.join('&')}`;
}

function send(
  transport: typeof http | typeof https,
  options: https.RequestOptions,
  body: Buffer | undefined,
  timeoutMs: number,
  maxResponseBytes: number,
): Promise<GatewayResponse> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      reject(error);
    };
    const request = transport.request(options, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxResponseBytes) {
          fail(new Error(`the gateway answer is larger than ${maxResponseBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('error', fail);
      response.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const contentType = response.headers['content-type'];
        resolve({
          status: response.statusCode ?? 502,
          headers: response.headers,
          body: Buffer.concat(chunks),
          ...(contentType ? { contentType } : {}),
        });
      });
    });
    const timer = setTimeout(
      () => fail(new Error(`no complete gateway answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    request.on('error', fail);
    request.end(body);
  });
}
