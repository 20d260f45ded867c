import type { JWK } from 'jose';

/** What a source may need from the process that builds it. */
export interface SourceContext {
  /** The source's name in `identities.sources`, for messages. */
  readonly name: string;
  /** Relative files (secrets, token files) are resolved against it: the configuration file's folder. */
  readonly directory: string;
  readonly now: () => number;
  /** The authorization server the `portcullis` source mints for; absent when `auth` is off. */
  readonly authorizationServer?: {
    readonly issuer: string;
    /** The private keys the AS signs with, current first, read again for each token (they rotate). */
    signingKeys(): Promise<JWK[]>;
  };
}
