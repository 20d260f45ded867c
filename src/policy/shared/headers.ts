/**
 * How a header collection goes on the wire, shared by the runner (the request forwarded, the final response) and
 * send-request (the request it builds).
 */
import type { HeaderCollection } from '../../expr/index.js';

/**
 * Headers whose values may contain commas or are dates: API Management sends one header line per value for
 * these and joins all others with a comma.
 */
const MULTI_LINE = new Set([
  'user-agent',
  'www-authenticate',
  'proxy-authenticate',
  'cookie',
  'set-cookie',
  'warning',
  'date',
  'expires',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'retry-after',
]);

export function serializeHeaders(headers: HeaderCollection): [string, string][] {
  const out: [string, string][] = [];
  for (const [name, values] of headers.entries()) {
    if (MULTI_LINE.has(name.toLowerCase())) for (const v of values) out.push([name, v]);
    else out.push([name, values.join(',')]);
  }
  return out;
}
