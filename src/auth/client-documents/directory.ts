import { LRUCache } from 'lru-cache';
import type { ResolvedOptions } from '../options.js';
import type { ClientRecord, ClientStore } from '../stores/types.js';
import { AddressPolicy } from './address.js';
import { isUrlClientId } from './client-id.js';
import { clientFromDocument, parseClientIdUrl } from './document.js';
import { ClientDocumentError } from './errors.js';
import { type FetchSettings, fetchDocument } from './fetch.js';

/** Client ID Metadata Documents as the server uses them, every limit resolved. */
export interface ClientDocumentOptions {
  /** CIDR ranges a document may be fetched from although not public (development only). */
  allowedNetworks: string[];
  /** Extra trusted certificate authorities (PEM) for document hosts (development only). */
  ca: string | undefined;
  timeoutMs: number;
  maxBytes: number;
  /** How long a document is kept when its response says nothing (no Cache-Control max-age). */
  defaultCacheSeconds: number;
  /** The longest a document is kept, whatever its max-age says. */
  maxCacheSeconds: number;
  /** Documents kept at most (least recently used dropped first). */
  maxCachedDocuments: number;
}

/**
 * RFC 9111 freshness from Cache-Control, bounded by `maxSeconds`: `no-store` and `no-cache` keep nothing (the next
 * use fetches again), `max-age` is honoured up to the bound, and without either a short default applies.
 */
export function cacheLifetime(
  cacheControl: string | undefined,
  bounds: { defaultSeconds: number; maxSeconds: number },
): number {
  const directives = (cacheControl ?? '')
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (directives.some((d) => d === 'no-store' || d === 'no-cache' || d.startsWith('no-cache='))) return 0;
  const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)?.[1]).find((v) => v !== undefined);
  return Math.min(maxAge === undefined ? bounds.defaultSeconds : Number(maxAge), bounds.maxSeconds);
}

/**
 * Clients identified by their metadata document's URL: fetched on first use, validated, kept per HTTP caching in a
 * bounded per-process cache (documents are public and cheap to fetch again, so they are never written to the
 * shared stores). Concurrent uses of one URL share one fetch.
 */
export class ClientDocuments {
  private readonly cache: LRUCache<string, { client: ClientRecord; expiresAt: number }>;
  private readonly pending = new Map<string, Promise<ClientRecord>>();
  private readonly fetchSettings: FetchSettings;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly documents: ClientDocumentOptions,
  ) {
    this.cache = new LRUCache({ max: documents.maxCachedDocuments });
    this.fetchSettings = {
      addresses: new AddressPolicy(documents.allowedNetworks),
      timeoutMs: documents.timeoutMs,
      maxBytes: documents.maxBytes,
      ca: documents.ca,
    };
  }

  /** The client the document at `clientId` describes; ClientDocumentError (invalid_client) says why not. */
  async resolve(clientId: string): Promise<ClientRecord> {
    const cached = this.cache.get(clientId);
    if (cached && cached.expiresAt > this.options.clock()) return cached.client;
    let loading = this.pending.get(clientId);
    if (!loading) {
      loading = this.load(clientId).finally(() => this.pending.delete(clientId));
      this.pending.set(clientId, loading);
    }
    return loading;
  }

  private async load(clientId: string): Promise<ClientRecord> {
    try {
      const url = parseClientIdUrl(clientId);
      const fetched = await fetchDocument(url, clientId, this.fetchSettings);
      const now = this.options.clock();
      const client = clientFromDocument(clientId, fetched.text, this.options.scopes, now);
      const lifetime = cacheLifetime(fetched.cacheControl, {
        defaultSeconds: this.documents.defaultCacheSeconds,
        maxSeconds: this.documents.maxCacheSeconds,
      });
      if (lifetime > 0) this.cache.set(clientId, { client, expiresAt: now + lifetime });
      else this.cache.delete(clientId);
      return client;
    } catch (error) {
      // A document that became invalid is not served from the cache either.
      this.cache.delete(clientId);
      if (error instanceof ClientDocumentError) {
        this.options.securityEvent('client_document.refused', {
          client_id: clientId,
          reason: error.reason,
        });
        this.options.logger.info('auth: client metadata document refused', {
          client_id: clientId.slice(0, 200),
          reason: error.reason,
          message: error.message,
        });
      }
      throw error;
    }
  }
}

/**
 * Every client the server knows: registered ones from the store, and — when documents are enabled — those named by
 * an https client_id URL. Handlers use it where they look a client up by the id a request carries; a URL client is
 * never stored, so RFC 7592 management and deletion never find one.
 */
export class ClientDirectory implements ClientStore {
  constructor(
    readonly registered: ClientStore,
    private readonly documents: ClientDocuments | undefined,
  ) {}

  /** Whether `client_id_metadata_document_supported` is true. */
  get documentsSupported(): boolean {
    return this.documents !== undefined;
  }

  /**
   * The client, undefined for an unknown registered id, or ClientDocumentError saying why a URL client cannot be
   * used (shown on the authorization error page).
   */
  async find(clientId: string): Promise<ClientRecord | undefined> {
    if (!isUrlClientId(clientId)) return this.registered.get(clientId);
    if (!this.documents) {
      throw new ClientDocumentError(
        'disabled',
        clientId.slice(0, 200),
        'this server does not accept client metadata documents (auth.clientMetadataDocuments.enabled is false)',
      );
    }
    return this.documents.resolve(clientId);
  }

  /** As find(), with "unusable" as undefined: where the caller only needs to know whether the client is usable. */
  async get(clientId: string): Promise<ClientRecord | undefined> {
    try {
      return await this.find(clientId);
    } catch (error) {
      if (error instanceof ClientDocumentError) return undefined;
      throw error;
    }
  }

  put(client: ClientRecord): Promise<void> {
    if (isUrlClientId(client.clientId))
      throw new TypeError(`a client identified by its metadata document is never stored: ${client.clientId}`);
    return this.registered.put(client);
  }

  delete(clientId: string): Promise<boolean> {
    return this.registered.delete(clientId);
  }
}
