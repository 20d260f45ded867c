import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type Koa from 'koa';
import { readBoundedBody } from '../bounded-body.js';
import type { Logger } from '../log.js';
import { authenticate } from './auth/bearer.js';
import { bearerChallenge } from './auth/challenge.js';
import {
  protectedResourceMetadata,
  type ResourceLocation,
  WELL_KNOWN_PRM,
} from './auth/resource-metadata.js';
import { challengeScopes } from './auth/scope-selection.js';
import type { ToolRegistry } from './tools/registry.js';
import { ErrorCodes, errorReply, type HttpReply, type HttpRequestView, jsonReply } from './transport/http.js';
import type { StreamableHttpTransport } from './transport/router.js';
import type { AccessTokenVerifier, Subject } from './types.js';

export interface KoaAdapterOptions {
  readonly location: ResourceLocation;
  readonly issuer: string;
  readonly verifier: AccessTokenVerifier;
  readonly transport: StreamableHttpTransport;
  /** Every scope a tool needs (REST-API and upstream tools): the metadata's `scopes_supported`; a REST-API tool by name. */
  readonly tools: Pick<ToolRegistry, 'find' | 'scopesSupported'>;
  /** Browser origins allowed to call the endpoint besides the endpoint's own origin. */
  readonly allowedOrigins: readonly string[];
  /** When set, the `Host` header must be one of these (DNS-rebinding protection for local deployments). */
  readonly allowedHosts?: readonly string[];
  readonly maxBodyBytes: number;
  readonly resourceName?: string;
  readonly logger: Logger;
}

const EXPOSED = 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version';
const ALLOWED_HEADERS =
  'Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID';
const PARAMETER_HEADER = /^mcp-param-[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * The allowed request headers, plus the `Mcp-Param-*` ones the preflight asks for: a 2026-07-28 browser client
 * mirrors `x-mcp-header` arguments under names that depend on the tool it calls (SEP-2243).
 */
function allowedHeaders(requested: string): string {
  const parameters = requested
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => PARAMETER_HEADER.test(name));
  return [ALLOWED_HEADERS, ...new Set(parameters)].join(', ');
}

/** The checks every request to the endpoint passes, in order. Each returns a reply to stop, or nothing. */
type Check = (
  ctx: Koa.Context,
  state: RequestState,
) => HttpReply | undefined | Promise<HttpReply | undefined>;

interface RequestState {
  cors: Record<string, string>;
  subject?: Subject;
  /** The bearer check failed: answered 401 once the body says which scopes the request needs. */
  refused?: { readonly tokenSent: boolean };
}

/**
 * How much of an unauthenticated request's body is read to choose the challenge's scopes (a `tools/call` names its
 * tool near the start); past it, the challenge asks for the read scopes.
 */
const challengeBodyBytes = 64 * 1024;

function writeReply(ctx: Koa.Context, reply: HttpReply, extraHeaders: Record<string, string>): void {
  // Koa would add a text body to an empty 202 and buffer nothing for SSE; the transport's replies are exact,
  // so they are written to the Node response directly.
  ctx.status = reply.status;
  ctx.respond = false;
  const res: ServerResponse = ctx.res;
  const headers = { ...extraHeaders, ...reply.headers };
  if (typeof reply.body === 'string') headers['content-length'] = String(Buffer.byteLength(reply.body));
  res.writeHead(reply.status, headers);
  if (reply.body === undefined) {
    res.end();
  } else if (typeof reply.body === 'string') {
    res.end(reply.body);
  } else {
    const stream: Readable = reply.body;
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    res.flushHeaders();
    stream.pipe(res);
    res.on('close', () => reply.onClientClose?.());
  }
}

async function readBody(ctx: Koa.Context, limit: number): Promise<Buffer | 'too-large'> {
  return (await readBoundedBody(ctx.req, limit)) ?? 'too-large';
}

function view(ctx: Koa.Context, body: Buffer | undefined): HttpRequestView {
  return {
    method: ctx.method,
    header: (name) => {
      const value = ctx.req.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    body,
  };
}

/**
 * A page served from one of the endpoint's own names (`allowedHosts`: `127.0.0.1:8080` besides `localhost:8080`)
 * is the endpoint's own site: its Origin is accepted when the origin's host[:port] is listed. Only http(s) origins;
 * `null` and anything unparsable are not.
 */
function originHostAllowed(origin: string, hosts: ReadonlySet<string> | undefined): boolean {
  if (!hosts || !URL.canParse(origin)) return false;
  const url = new URL(origin);
  return (url.protocol === 'http:' || url.protocol === 'https:') && hosts.has(url.host.toLowerCase());
}

/**
 * The 401 answer: a bare challenge when no token came, `invalid_token` when one came and was refused; its `scope`
 * is what the request needs (scope-selection.ts).
 */
function unauthorized(o: KoaAdapterOptions, tokenSent: boolean, request: Buffer | undefined): HttpReply {
  const description = tokenSent
    ? 'The access token is invalid, expired, revoked or not for this resource'
    : undefined;
  const challenge = bearerChallenge({
    error: tokenSent ? 'invalid_token' : undefined,
    errorDescription: description,
    scope: challengeScopes(request, o.tools),
    resourceMetadata: o.location.metadataUrl,
  });
  const body = tokenSent
    ? { error: 'invalid_token', error_description: description }
    : { error: 'unauthorized', error_description: 'A bearer access token is required' };
  return jsonReply(401, body, { 'www-authenticate': challenge, 'cache-control': 'no-store' });
}

/** The endpoint's checks, in the order a request meets them: Host, Origin, CORS preflight, bearer token. */
function endpointChecks(o: KoaAdapterOptions): readonly [string, Check][] {
  const ownOrigin = new URL(o.location.resource).origin;
  const origins = new Set([ownOrigin, ...o.allowedOrigins]);
  const hosts = o.allowedHosts ? new Set(o.allowedHosts.map((h) => h.toLowerCase())) : undefined;
  return [
    [
      'host',
      (ctx) => {
        if (!hosts || hosts.has((ctx.get('host') || '').toLowerCase())) return undefined;
        return errorReply(
          403,
          ErrorCodes.Transport,
          `Forbidden: Host ${JSON.stringify(ctx.get('host'))} is not allowed`,
        );
      },
    ],
    [
      'origin',
      (ctx, state) => {
        const origin = ctx.get('origin');
        if (!origin) return undefined;
        if (!origins.has(origin) && !originHostAllowed(origin, hosts)) {
          return errorReply(
            403,
            ErrorCodes.Transport,
            `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`,
          );
        }
        state.cors = {
          'access-control-allow-origin': origin,
          vary: 'Origin',
          'access-control-expose-headers': EXPOSED,
        };
        return undefined;
      },
    ],
    [
      'preflight',
      (ctx) => {
        if (ctx.method !== 'OPTIONS') return undefined;
        return {
          status: 204,
          headers: {
            'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
            'access-control-allow-headers': allowedHeaders(ctx.get('access-control-request-headers')),
            'access-control-max-age': '600',
          },
        };
      },
    ],
    [
      'bearer token',
      async (ctx, state) => {
        const auth = await authenticate(
          ctx.get('authorization') || undefined,
          o.verifier,
          o.location.resource,
        );
        if (auth.ok) {
          state.subject = auth.subject;
          return undefined;
        }
        if (auth.tokenSent) o.logger.info('mcp: 401 invalid_token', { reason: auth.reason });
        state.refused = { tokenSent: auth.tokenSent };
        return undefined;
      },
    ],
  ];
}

/** The transport's reply to a call the token's scopes do not cover, with a step-up challenge added. */
function withStepUpChallenge(
  o: KoaAdapterOptions,
  reply: HttpReply,
  missing: readonly string[],
  subject: Subject,
): HttpReply {
  // Ask for what is missing plus what the token already has, so a client that replaces (rather than
  // adds to) its scope on step-up keeps its other tools.
  const granted = subject.scopes.filter((s) => o.tools.scopesSupported().includes(s));
  const challenge = bearerChallenge({
    error: 'insufficient_scope',
    errorDescription: `This call requires scope ${missing.join(' ')}`,
    scope: [...new Set([...granted, ...missing])],
    resourceMetadata: o.location.metadataUrl,
  });
  return { ...reply, headers: { ...reply.headers, 'www-authenticate': challenge } };
}

/** The MCP endpoint itself: the checks, then the bounded body, then the transport. */
function endpointHandler(o: KoaAdapterOptions): (ctx: Koa.Context) => Promise<void> {
  const checks = endpointChecks(o);
  return async (ctx) => {
    const state: RequestState = { cors: {} };
    for (const [, check] of checks) {
      const refusal = await check(ctx, state);
      if (refusal) return writeReply(ctx, refusal, state.cors);
    }
    let body: Buffer | undefined;
    if (state.refused) {
      const read =
        ctx.method === 'POST' ? await readBody(ctx, Math.min(o.maxBodyBytes, challengeBodyBytes)) : undefined;
      if (read === 'too-large') ctx.set('connection', 'close');
      const known = read === 'too-large' ? undefined : read;
      return writeReply(ctx, unauthorized(o, state.refused.tokenSent, known), state.cors);
    }
    if (ctx.method === 'POST') {
      const read = await readBody(ctx, o.maxBodyBytes);
      if (read === 'too-large') {
        ctx.set('connection', 'close');
        return writeReply(
          ctx,
          errorReply(413, ErrorCodes.Transport, `Payload Too Large: the limit is ${o.maxBodyBytes} bytes`),
          state.cors,
        );
      }
      body = read;
    }
    const reply = await o.transport.handle(view(ctx, body), state.subject!);
    if (reply.insufficientScopes) {
      return writeReply(
        ctx,
        withStepUpChallenge(o, reply, reply.insufficientScopes, state.subject!),
        state.cors,
      );
    }
    return writeReply(ctx, reply, state.cors);
  };
}

/** RFC 9728 protected-resource metadata: public, so any origin may read it. */
function metadataHandler(o: KoaAdapterOptions): (ctx: Koa.Context) => void {
  return (ctx) => {
    const cors = { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED };
    if (ctx.method === 'OPTIONS') {
      return writeReply(
        ctx,
        {
          status: 204,
          headers: {
            'access-control-allow-methods': 'GET, OPTIONS',
            'access-control-allow-headers': ALLOWED_HEADERS,
          },
        },
        cors,
      );
    }
    const known = ctx.path === WELL_KNOWN_PRM || ctx.path === o.location.metadataPath;
    if (!known) return writeReply(ctx, jsonReply(404, { error: 'not_found' }), cors);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      return writeReply(
        ctx,
        jsonReply(405, { error: 'method_not_allowed' }, { allow: 'GET, HEAD, OPTIONS' }),
        cors,
      );
    }
    const doc = protectedResourceMetadata(o.location, o.issuer, o.tools.scopesSupported(), o.resourceName);
    const reply = jsonReply(200, doc, { 'cache-control': 'public, max-age=60' });
    return writeReply(ctx, ctx.method === 'HEAD' ? { ...reply, body: undefined } : reply, cors);
  };
}

/**
 * The Koa side of the endpoint: serves RFC 9728 metadata, answers CORS preflights, checks Host/Origin and the
 * bearer token, then hands the request to the transport. Paths it does not own go to `next`.
 */
export function mcpKoaMiddleware(o: KoaAdapterOptions): Koa.Middleware {
  const endpoint = endpointHandler(o);
  const metadata = metadataHandler(o);
  return async (ctx, next) => {
    const path = ctx.path;
    if (path === o.location.path || path === `${o.location.path}/`) return endpoint(ctx);
    if (path === WELL_KNOWN_PRM || path.startsWith(`${WELL_KNOWN_PRM}/`)) return metadata(ctx);
    return next();
  };
}
