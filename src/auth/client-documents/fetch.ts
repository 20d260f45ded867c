import dns from 'node:dns';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import type { AddressPolicy } from './address.js';
import { ClientDocumentError, type DocumentRefusal } from './errors.js';

export interface FetchSettings {
  addresses: AddressPolicy;
  /** Whole exchange, from the DNS lookup to the last byte. */
  timeoutMs: number;
  maxBytes: number;
  /** Extra trusted certificate authorities (PEM), for a development document host; default the system's. */
  ca: string | undefined;
}

export interface FetchedDocument {
  text: string;
  cacheControl: string | undefined;
}

/** Raised inside the lookup so the request's error handler can tell it from a network failure. */
class AddressRefused extends Error {
  constructor(readonly address: string) {
    super(`address ${address} is not public`);
  }
}

/**
 * Resolves the host once, refuses it if ANY of its addresses is not allowed (a name with one public and one private
 * address must not get a second chance), and hands exactly the checked addresses to the connection, so a second
 * resolution (DNS rebinding) can never pick another one.
 */
function checkedLookup(addresses: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, verbatim: true }, (error, found) => {
      if (error) return (callback as (e: Error) => void)(error);
      const refused = found.find((entry) => !addresses.permits(entry.address));
      if (found.length === 0 || refused)
        return (callback as (e: Error) => void)(new AddressRefused(refused?.address ?? 'none'));
      if (options.all) return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, found);
      (callback as (e: null, a: string, f: number) => void)(null, found[0]!.address, found[0]!.family);
    });
  };
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * GET of a client metadata document (draft-ietf-oauth-client-id-metadata-document §6, MCP authorization
 * 2025-11-25 "SSRF"): https only (the caller checked the URL), the connection pinned to a checked public address,
 * no redirect followed, no connection reused, a size cap checked while reading and one deadline for everything.
 */
export function fetchDocument(url: URL, clientId: string, settings: FetchSettings): Promise<FetchedDocument> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(host) !== 0 && !settings.addresses.permits(host)) {
    return Promise.reject(
      new ClientDocumentError('address_refused', clientId, `the host ${host} is not a public address`),
    );
  }
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (reason: DocumentRefusal, message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request.destroy();
      reject(new ClientDocumentError(reason, clientId, message));
    };
    const request = https.request({
      host,
      port: url.port === '' ? 443 : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': 'portcullis-authorization-server' },
      agent: false,
      lookup: checkedLookup(settings.addresses),
      ...(net.isIP(host) === 0 ? { servername: host } : {}),
      ...(settings.ca === undefined ? {} : { ca: settings.ca }),
    });
    const deadline = setTimeout(
      () => fail('timeout', `the host did not answer within ${settings.timeoutMs} ms`),
      settings.timeoutMs,
    );
    // Belt and braces: the address actually connected to is checked too.
    request.on('socket', (socket) => {
      socket.once('connect', () => {
        const peer = socket.remoteAddress;
        if (peer === undefined || !settings.addresses.permits(peer))
          fail('address_refused', `the host ${host} resolved to ${peer}, which is not a public address`);
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof AddressRefused) {
        fail(
          'address_refused',
          `the host ${host} resolves to ${error.address}, which is not a public address`,
        );
      } else if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') {
        fail('unresolvable', `the host ${host} does not resolve`);
      } else if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO/.test(error.code ?? '')) {
        fail('tls', `the host's TLS certificate is not trusted (${error.code})`);
      } else {
        fail('unreachable', `the host could not be reached (${error.code ?? error.message})`);
      }
    });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        return fail('redirect', `the host answered ${status} (a redirect); redirects are not followed`);
      }
      if (status !== 200) return fail('http_status', `the host answered HTTP ${status}, not 200`);
      const type = response.headers['content-type'] ?? '';
      if (!JSON_TYPE.test(type)) {
        return fail('content_type', `the content type must be application/json, got "${type.slice(0, 60)}"`);
      }
      const declared = Number(response.headers['content-length'] ?? 0);
      const tooLarge = () => fail('too_large', `the document is larger than ${settings.maxBytes} bytes`);
      if (declared > settings.maxBytes) return tooLarge();
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > settings.maxBytes) return tooLarge();
        chunks.push(chunk);
      });
      response.on('error', () => fail('unreachable', 'the connection broke while reading the document'));
      // After 'end' this is a no-op; before it, the host hung up mid-document.
      response.on('close', () =>
        fail('unreachable', 'the connection closed before the document was complete'),
      );
      response.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve({
          text: Buffer.concat(chunks).toString('utf8'),
          cacheControl: response.headers['cache-control'],
        });
      });
    });
    request.end();
  });
}
