import type { IncomingMessage } from 'node:http';
import { readBoundedBody } from '../bounded-body.js';
import { OAuthError } from './errors.js';

/**
 * A strict reader for OAuth request bodies. No general-purpose body parser is used on purpose: `co-body`
 * builds objects from `a[b]=1` / `a.b=1`, turns repeats into arrays and inflates gzip transparently, each of
 * which is an attack surface on an authorization server. Here a body is raw bytes with a small limit, no
 * content coding, valid UTF-8, and every parameter appears at most once.
 */

export const FORM_LIMIT_BYTES = 16 * 1024;
export const JSON_LIMIT_BYTES = 32 * 1024;

/** Reads the raw body, refusing more than `limit` bytes before buffering them. */
export async function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw new OAuthError('invalid_request', `content-encoding "${encoding}" is not accepted`);
  }
  const body = await readBoundedBody(req, limit);
  if (!body) throw new OAuthError('invalid_request', `request body exceeds ${limit} bytes`, { status: 413 });
  return body;
}

/** Parses `type/subtype; charset=...` and checks the media type; only UTF-8 is accepted as a charset. */
function checkContentType(header: string | undefined, expected: string): void {
  if (header === undefined) throw new OAuthError('invalid_request', `content-type must be ${expected}`);
  const [type, ...params] = header.split(';');
  if (type!.trim().toLowerCase() !== expected) {
    throw new OAuthError('invalid_request', `content-type must be ${expected}, got "${type!.trim()}"`);
  }
  for (const param of params) {
    const [name, value] = param.split('=');
    if (
      name?.trim().toLowerCase() === 'charset' &&
      value?.trim().replace(/"/g, '').toLowerCase() !== 'utf-8'
    ) {
      throw new OAuthError('invalid_request', 'only the UTF-8 charset is accepted');
    }
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes `application/x-www-form-urlencoded` (WHATWG rules: `+` is a space) strictly: malformed `%` escapes,
 * invalid UTF-8 and repeated names are `invalid_request`. Empty values count as absent (OAuth 2.1 §3.2).
 */
export function parseForm(raw: Buffer | string): Map<string, string> {
  let text: string;
  try {
    text = typeof raw === 'string' ? raw : utf8.decode(raw);
  } catch {
    throw new OAuthError('invalid_request', 'request body is not valid UTF-8');
  }
  const params = new Map<string, string>();
  const seen = new Set<string>();
  if (text === '') return params;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decodeComponent(pair.slice(eq + 1));
    if (seen.has(name)) throw new OAuthError('invalid_request', `parameter "${name}" is repeated`);
    seen.add(name);
    if (value !== '') params.set(name, value);
  }
  return params;
}

function decodeComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new OAuthError('invalid_request', 'malformed percent-encoding in the request');
  }
}

/** Reads and parses a form-encoded POST body. */
export async function readForm(req: IncomingMessage): Promise<Map<string, string>> {
  checkContentType(req.headers['content-type'], 'application/x-www-form-urlencoded');
  return parseForm(await readRawBody(req, FORM_LIMIT_BYTES));
}

/** Reads a JSON object body (client registration). */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  checkContentType(req.headers['content-type'], 'application/json');
  const raw = await readRawBody(req, JSON_LIMIT_BYTES);
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(raw));
  } catch {
    throw new OAuthError('invalid_client_metadata', 'request body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new OAuthError('invalid_client_metadata', 'request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/**
 * Query parameters with the same rules as forms. A raw query string is parsed rather than Koa's `ctx.query`,
 * which silently turns repeats into arrays.
 */
export function parseQuery(querystring: string): Map<string, string> {
  return parseForm(querystring);
}
