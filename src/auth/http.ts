import type { Context, Middleware } from 'koa';
import type { Logger } from '../log.js';
import { type OAuthError, toOAuthError } from './errors.js';

/** Responses carrying tokens or credentials must never be cached (OAuth 2.1 §3.2.3). */
export function noStore(ctx: Context): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
}

export function sendJson(ctx: Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(body);
}

/**
 * CORS for any origin without credentials: endpoints called by clients (metadata, JWKS, token, registration,
 * introspection) may be called from a browser-based MCP client. The authorization endpoint and its pages never get
 * CORS headers (OAuth 2.1 §3.1).
 */
export function allowCors(ctx: Context, methods: string): void {
  if (!ctx.get('Origin')) return;
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Allow-Methods', methods);
  ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, MCP-Protocol-Version');
  ctx.set('Access-Control-Expose-Headers', 'WWW-Authenticate');
  ctx.set('Access-Control-Max-Age', '600');
}

export interface ClientEndpointOptions {
  /** The methods the path takes (`POST`, `GET, PUT, DELETE`), as Access-Control-Allow-Methods names them. */
  methods: string;
  /** How a success may be cached; default no-store, as anything carrying tokens or credentials must be. */
  cacheControl?: string;
  logger: Logger;
}

/**
 * What every endpoint called by clients shares, in front of its handler: CORS, a preflight answered here, how the
 * answer may be cached, and any failure as an RFC 6749 §5.2 JSON error (an internal one logged and shown as
 * server_error).
 */
export function clientEndpoint(options: ClientEndpointOptions): Middleware {
  return async (ctx, next) => {
    allowCors(ctx, options.methods);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    if (options.cacheControl === undefined) noStore(ctx);
    else ctx.set('Cache-Control', options.cacheControl);
    try {
      await next();
    } catch (err) {
      sendOAuthError(ctx, err, options.logger);
    }
  };
}

/** RFC 6749 §5.2 JSON error; anything that is not an OAuthError is logged and shown as server_error. */
export function sendOAuthError(ctx: Context, err: unknown, logger: Logger): OAuthError {
  const error = toOAuthError(err);
  if (error !== err)
    logger.error('unexpected failure', { path: ctx.path, error: String((err as Error)?.stack ?? err) });
  noStore(ctx);
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  sendJson(ctx, error.status, error.toJSON());
  return error;
}

export interface CookieOptions {
  secure: boolean;
  path: string;
  maxAge?: number;
}

export function setCookie(ctx: Context, name: string, value: string, options: CookieOptions): void {
  const parts = [`${name}=${value}`, `Path=${options.path}`, 'HttpOnly', 'SameSite=Lax'];
  if (options.secure) parts.push('Secure');
  if (options.maxAge !== undefined) parts.push(`Max-Age=${options.maxAge}`);
  ctx.append('Set-Cookie', parts.join('; '));
}

export function readCookie(ctx: Context, name: string): string | undefined {
  const header = ctx.get('Cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
