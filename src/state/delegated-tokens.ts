import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { type StateBackend, unknownBackend } from './backend.js';
import type { EmbeddedState } from './embedded.js';
import type { RedisConnection } from './redis-connection.js';

/**
 * The tokens a user obtained from the authorization server's upstream OpenID Connect provider, handed from the
 * authorization server (which receives them at sign-in) to the engine's credential manager (which uses and
 * refreshes them for get-authorization-context's user-delegated connections). The two run in different processes:
 * the records live where both reach them, the embedded store of `state.dataDir` or `state.redis`.
 */
export interface DelegatedTokenRecord {
  readonly accessToken: string;
  readonly refreshToken?: string;
  /** Milliseconds since the epoch. */
  readonly expiresAt: number;
  /** When the access token was obtained (ms since the epoch): a short lifetime is refreshed at a quarter of it. */
  readonly obtainedAt: number;
  /**
   * The scope granted at sign-in (space-separated): a refresh of this token asks for it again, so it keeps what the
   * user consented to (Entra ID, among others, wants the scope on every refresh).
   */
  readonly scope?: string;
}

/** Where sealed records are kept: raw bytes by an opaque key. */
export interface SealedRecords {
  get(key: string): Promise<Buffer | undefined>;
  set(key: string, value: Buffer): Promise<void>;
  delete(key: string): Promise<void>;
}

/** How long a record outlives its last write in Redis (a refresh token unused this long is given up). */
const REDIS_RECORD_TTL_MS = 90 * 24 * 3600 * 1000;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Records sealed with AES-256-GCM under a key derived (HKDF-SHA256) from a secret the engine and the service share
 * (`identities.delegatedTokenKey`), each under the SHA-256 digest of its user, the user as additional data: whoever
 * reads the store sees neither tokens nor user names, and a record copied to another user's key does not open.
 */
export class DelegatedTokens {
  readonly #key: Buffer;

  constructor(
    private readonly records: SealedRecords,
    secret: string,
  ) {
    if (secret.length < 16) throw new TypeError('the delegated token key must be at least 16 characters');
    this.#key = Buffer.from(
      hkdfSync('sha256', secret, 'portcullis', 'delegated upstream tokens, aes-256-gcm', 32),
    );
  }

  /** The user's record; undefined when there is none or it does not open with this key (another key, tampered). */
  async read(user: string): Promise<DelegatedTokenRecord | undefined> {
    const sealed = await this.records.get(keyOf(user));
    if (sealed === undefined || sealed.length < IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(user));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
        decipher.final(),
      ]);
      return JSON.parse(plain.toString('utf8')) as DelegatedTokenRecord;
    } catch {
      return undefined;
    }
  }

  async write(user: string, record: DelegatedTokenRecord): Promise<void> {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(user));
    const body = Buffer.concat([cipher.update(JSON.stringify(record), 'utf8'), cipher.final()]);
    await this.records.set(keyOf(user), Buffer.concat([iv, body, cipher.getAuthTag()]));
  }

  /** Forgets the user's tokens (their grant ended): the engine's connections fail for them until they sign in again. */
  async remove(user: string): Promise<void> {
    await this.records.delete(keyOf(user));
  }
}

function keyOf(user: string): string {
  return createHash('sha256').update(user).digest('base64url');
}

/** One process only (tests, a single-process deployment): lost on restart, invisible to other processes. */
export function memorySealedRecords(): SealedRecords {
  const records = new Map<string, Buffer>();
  return {
    get: async (key) => records.get(key),
    set: async (key, value) => {
      records.set(key, value);
    },
    delete: async (key) => {
      records.delete(key);
    },
  };
}

/** The embedded store of `state.dataDir`: shared by the processes of one machine, flushed before a write settles. */
export function embeddedSealedRecords(embedded: EmbeddedState): SealedRecords {
  const database = embedded.database<Uint8Array>('delegated-tokens');
  return {
    get: async (key) => {
      const value = database.get(key);
      return value === undefined ? undefined : Buffer.from(value);
    },
    set: async (key, value) => {
      await embedded.durable(database.put(key, value));
    },
    delete: async (key) => {
      await embedded.durable(database.remove(key));
    },
  };
}

/** `state.redis`: shared by every machine. */
export function redisSealedRecords(redis: RedisConnection): SealedRecords {
  return {
    get: async (key) =>
      (await redis.run('delegated token get', (client) => client.getBuffer(`deleg:${key}`))) ?? undefined,
    set: async (key, value) => {
      await redis.run('delegated token set', (client) =>
        client.set(`deleg:${key}`, value, 'PX', REDIS_RECORD_TTL_MS),
      );
    },
    delete: async (key) => {
      await redis.run('delegated token delete', (client) => client.del(`deleg:${key}`));
    },
  };
}

/** The shared records of a state's backend, or none in memory (one process only: the engine would not see them). */
export function sharedSealedRecords(backend: StateBackend): SealedRecords | undefined {
  switch (backend.kind) {
    case 'redis':
      return redisSealedRecords(backend.connection);
    case 'embedded':
      return embeddedSealedRecords(backend.store);
    case 'memory':
      return undefined;
    default:
      return unknownBackend(backend);
  }
}
