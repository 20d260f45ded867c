import { IdentityError } from './errors.js';
import { type IdentitiesConfig, type IdentitySourceConfig, identitySourceSchema } from './options.js';
import { createSource, type SourceContext } from './sources/index.js';
import { type IssuedToken, TokenCache, type TokenRequest, type TokenSource } from './token-source.js';

export interface IdentitiesOptions {
  readonly config?: IdentitiesConfig;
  /** The configuration file's folder: relative secret and token files are resolved against it. */
  readonly directory: string;
  readonly authorizationServer?: SourceContext['authorizationServer'];
  readonly now?: () => number;
}

interface Named {
  readonly name: string;
  readonly config: IdentitySourceConfig;
  readonly source: TokenSource;
}

/** The implicit source when `auth` is on and no source is named `portcullis`. */
const IMPLICIT_PORTCULLIS = 'portcullis';

/**
 * The gateway's token sources by name, with one cache: a policy asks for a resource (and maybe a client-id), this
 * picks the source — the one whose name or clientId is that client-id, else the default — and hands out its cached
 * token or fetches one.
 */
export class Identities {
  readonly #sources = new Map<string, Named>();
  readonly #default: string | undefined;
  readonly #cache: TokenCache;

  constructor(options: IdentitiesOptions) {
    const now = options.now ?? Date.now;
    this.#cache = new TokenCache(now);
    const configured = { ...(options.config?.sources ?? {}) };
    if (options.authorizationServer !== undefined && !(IMPLICIT_PORTCULLIS in configured))
      configured[IMPLICIT_PORTCULLIS] = identitySourceSchema.parse({ type: 'portcullis' });
    for (const [name, config] of Object.entries(configured)) {
      const context: SourceContext = {
        name,
        directory: options.directory,
        now,
        ...(options.authorizationServer ? { authorizationServer: options.authorizationServer } : {}),
      };
      this.#sources.set(name, { name, config, source: createSource(config, context) });
    }
    const names = Object.keys(options.config?.sources ?? {});
    this.#default =
      options.config?.default ??
      (options.authorizationServer !== undefined
        ? IMPLICIT_PORTCULLIS
        : names.length === 1
          ? names[0]
          : undefined);
  }

  /** The names of the sources, for messages and tests. */
  get names(): string[] {
    return [...this.#sources.keys()];
  }

  /** A token for the resource from the selected source, cached until shortly before it expires. */
  async token(request: TokenRequest): Promise<IssuedToken> {
    const { named, clientId } = this.#select(request.clientId);
    const key = `${named.name}\n${clientId ?? ''}\n${request.resource}`;
    return this.#cache.get(key, () =>
      named.source.fetch({ resource: request.resource, ...(clientId === undefined ? {} : { clientId }) }),
    );
  }

  /** The source a client-id selects, and the client id the source is asked to act as (azure-imds only). */
  #select(clientId: string | undefined): { named: Named; clientId: string | undefined } {
    if (clientId !== undefined) {
      const byName = this.#sources.get(clientId);
      if (byName) return { named: byName, clientId: undefined };
      for (const named of this.#sources.values()) {
        if (named.config.clientId === clientId)
          return { named, clientId: named.source.actsForAnyClientId ? clientId : undefined };
      }
    }
    const fallback = this.#default === undefined ? undefined : this.#sources.get(this.#default);
    if (fallback === undefined) {
      throw new IdentityError(
        'unknown-identity',
        this.#sources.size === 0
          ? 'no identity is configured (identities.sources, or auth for the portcullis source)'
          : `no default identity: set identities.default (sources: ${this.names.join(', ')})`,
      );
    }
    if (clientId === undefined) return { named: fallback, clientId: undefined };
    if (fallback.source.actsForAnyClientId) return { named: fallback, clientId };
    throw new IdentityError(
      'unknown-identity',
      `no identity source is named or has clientId "${clientId}" (sources: ${this.names.join(', ')})`,
    );
  }
}
