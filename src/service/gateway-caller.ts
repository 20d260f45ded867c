import http from 'node:http';
import https from 'node:https';
import { context, propagation, trace } from '@opentelemetry/api';
import type { ApiConfig } from '../config/schema.js';
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

/** What the caller needs of an API to reach it through the gateway. */
export type CallerApi = Pick<ApiConfig, 'id' | 'urlSuffix' | 'hostnames'>;

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
          path: `${route.pathPrefix}${request.path}`,
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
