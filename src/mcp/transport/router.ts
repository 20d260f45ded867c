import type { Logger } from '../../log.js';
import { findRevision, sessionRevisions } from '../protocol/revisions.js';
import type { Subject } from '../types.js';
import { ErrorCodes, errorReply, type HttpReply, type HttpRequestView } from './http.js';
import { methodNotAllowed, unsupportedVersion } from './refusals.js';
import type { SessionHttp } from './session-http.js';
import { SessionStoreUnavailableError } from './session-store.js';
import type { StatelessHttp } from './stateless-http.js';

const VERSION_HEADER = 'mcp-protocol-version';

export interface StreamableHttpOptions {
  /** The session-based revisions (2024-11-05 … 2025-11-25). */
  readonly sessionEra: SessionHttp;
  /**
   * The stateless 2026-07-28 revision, for requests whose `MCP-Protocol-Version` names it (or names an unknown
   * revision and carries the 2026 `Mcp-Method` header). Without it such requests get -32022 naming the others.
   */
  readonly stateless?: StatelessHttp;
  /** Where an unavailable session store is reported. */
  readonly logger?: Logger;
}

/**
 * MCP Streamable HTTP at the endpoint's URL: sends each request to the protocol era it belongs to, read from its
 * headers before its body, and answers 503 when the session store does not answer. Framework-free: it reads an
 * `HttpRequestView` and returns an `HttpReply`; authentication has already happened.
 */
export class StreamableHttpTransport {
  readonly #o: StreamableHttpOptions;

  constructor(options: StreamableHttpOptions) {
    this.#o = options;
  }

  async handle(request: HttpRequestView, subject: Subject): Promise<HttpReply> {
    try {
      return await this.#route(request, subject);
    } catch (error) {
      if (!(error instanceof SessionStoreUnavailableError)) throw error;
      this.#o.logger?.warn('mcp: session store unavailable', { reason: error.message });
      return errorReply(503, ErrorCodes.Transport, 'Service Unavailable: the session store did not answer', {
        headers: { 'retry-after': '1' },
      });
    }
  }

  async #route(request: HttpRequestView, subject: Subject): Promise<HttpReply> {
    const versionHeader = request.header(VERSION_HEADER);
    const named = versionHeader ? findRevision(versionHeader) : undefined;
    // A 2026 client always sends Mcp-Method; a legacy one never does, so an unknown version with it is the new era's
    // to refuse (-32022 with the request's id), one without it the legacy era's (400, and initialize is never refused).
    const modern =
      named?.stateless === true ||
      (versionHeader !== undefined && !named && request.header('mcp-method') !== undefined);
    if (!modern) return this.#o.sessionEra.handle(request, subject);
    if (request.method !== 'POST') return methodNotAllowed(request.method, 'POST');
    if (!this.#o.stateless) {
      // Not served: answer with the modern error a dual-era client recognises, naming what we do speak,
      // so it falls back to `initialize` instead of guessing (2026-07-28 versioning, backward compatibility).
      return unsupportedVersion(versionHeader, sessionRevisions);
    }
    return this.#o.stateless.handle(request, subject, versionHeader!);
  }
}
