import { MemoryCache } from './memory-cache.js';
import type { RedisByteCache } from './redis-cache.js';

/** API Management's `caching-type`: the built-in cache, the external (Redis) one, or external when there is one. */
export type CachingType = 'internal' | 'external' | 'prefer-external';

/** How values become bytes for the external cache; `encode` returns undefined for a value it cannot store. */
export interface ByteCodec<Value> {
  encode(value: Value): Buffer | undefined;
  decode(bytes: Buffer): Value;
}

export interface TieredCacheOptions<Value> {
  readonly internal: {
    readonly maxBytes: number;
    readonly maxEntryBytes: number;
    sizeOf(value: Value): number;
  };
  readonly external: RedisByteCache | undefined;
  readonly codec: ByteCodec<Value>;
  /** The external cache failed (the operation became a miss / no-op) or could not encode a value. */
  readonly onFailure: (operation: 'get' | 'set' | 'delete' | 'encode', error: unknown) => void;
}

/**
 * The two caches behind one interface, chosen per call by caching-type: `internal` is the in-process LRU bounded
 * in bytes; `external` and `prefer-external` use Redis when it is configured and the in-process cache otherwise
 * (so a single-process deployment runs documents written for a Redis-backed one). A failing Redis is a miss,
 * never an error and never a wait longer than the command timeout.
 */
export class TieredCache<Value extends {}> {
  readonly #internal: MemoryCache<Value>;
  readonly #external: RedisByteCache | undefined;

  constructor(private readonly options: TieredCacheOptions<Value>) {
    this.#internal = new MemoryCache<Value>({
      maxBytes: options.internal.maxBytes,
      maxEntryBytes: options.internal.maxEntryBytes,
      sizeOf: (value) => options.internal.sizeOf(value),
    });
    this.#external = options.external;
  }

  /** Whether `caching` goes to Redis. */
  external(caching: CachingType = 'prefer-external'): boolean {
    return caching !== 'internal' && this.#external !== undefined;
  }

  async get(key: string, caching?: CachingType): Promise<Value | undefined> {
    if (!this.external(caching)) return this.#internal.get(key);
    try {
      const bytes = await this.#external!.get(key);
      return bytes === undefined ? undefined : this.options.codec.decode(bytes);
    } catch (error) {
      this.options.onFailure('get', error);
      return undefined;
    }
  }

  async set(key: string, value: Value, ttlSeconds: number, caching?: CachingType): Promise<void> {
    if (!this.external(caching)) {
      this.#internal.set(key, value, ttlSeconds);
      return;
    }
    const bytes = this.options.codec.encode(value);
    if (bytes === undefined) {
      this.options.onFailure('encode', new TypeError('value cannot be stored in the external cache'));
      return;
    }
    try {
      await this.#external!.set(key, bytes, ttlSeconds);
    } catch (error) {
      this.options.onFailure('set', error);
    }
  }

  async delete(key: string, caching?: CachingType): Promise<void> {
    if (!this.external(caching)) {
      this.#internal.delete(key);
      return;
    }
    try {
      await this.#external!.delete(key);
    } catch (error) {
      this.options.onFailure('delete', error);
    }
  }

  /** Bytes held by the in-process cache. */
  get internalBytes(): number {
    return this.#internal.size;
  }
}
