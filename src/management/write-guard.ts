import type { Context, Next } from 'koa';
import { ManagementError } from './errors.js';

/** Methods that only read: never refused here. */
const readMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The media types a write may carry: JSON, XML (policies) and YAML (a configuration import). An HTML form can only
 * send `application/x-www-form-urlencoded`, `multipart/form-data` or `text/plain`, and a page may send those
 * cross-site without asking first (no CORS preflight): refusing them is what keeps a form from reaching the API.
 */
const writeMediaTypes = /^(application\/(json|xml|yaml|x-yaml|[\w.+-]+\+(json|xml|yaml))|text\/(xml|yaml))$/;

/**
 * Refuses forged writes before anyone signs in. A browser keeps an administrator's Basic credentials and sends
 * them with any request to the API, including one a foreign page makes it send (cross-site request forgery):
 * - a write whose `Origin` is not the API's own (scheme aside: the host and port the request was sent to), or
 *   whose `Sec-Fetch-Site` says another site or origin made it, is 403;
 * - a write whose body is not JSON, XML or YAML, or that carries a body without saying what it is, is 415
 *   (a `POST …/regeneratePrimaryKey` has no body, but a form sends its Content-Type anyway).
 * Tools (curl, scripts, the portcullis CLI) send neither Origin nor Sec-Fetch-Site and are not affected.
 */
export async function refuseForgedWrites(ctx: Context, next: Next): Promise<void> {
  if (readMethods.has(ctx.method)) return next();
  const fetchSite = ctx.get('sec-fetch-site').toLowerCase();
  if (fetchSite !== '' && fetchSite !== 'same-origin' && fetchSite !== 'none') {
    throw new ManagementError(
      403,
      'Forbidden',
      `a write must come from the management API's own origin, got Sec-Fetch-Site: ${fetchSite}`,
    );
  }
  const origin = ctx.get('origin');
  if (origin !== '' && originHost(origin) !== ctx.get('host').toLowerCase()) {
    throw new ManagementError(
      403,
      'Forbidden',
      `a write must come from the management API's own origin, got Origin: ${origin.slice(0, 200)}`,
    );
  }
  const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase();
  if (type !== '' && !writeMediaTypes.test(type)) {
    throw new ManagementError(
      415,
      'UnsupportedMediaType',
      `a write must carry JSON, XML or YAML, got ${type.slice(0, 100)}`,
    );
  }
  const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
  if (type === '' && hasBody) {
    throw new ManagementError(
      415,
      'UnsupportedMediaType',
      'a write with a body must say its Content-Type (JSON, XML or YAML)',
    );
  }
  return next();
}

/** `host[:port]` of an http(s) Origin, lower case; undefined for `null` or anything else. */
function originHost(origin: string): string | undefined {
  if (!URL.canParse(origin)) return undefined;
  const url = new URL(origin);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.host.toLowerCase() : undefined;
}
