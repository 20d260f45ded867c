import { LRUCache } from 'lru-cache';

/**
 * An in-process cache bounded in bytes (each entry's size is computed by the caller's `sizeOf`), with a TTL per
 * entry. The least recently used entries go first when the bound is reached.
 */
export class MemoryCache<Value extends {}> {
  private readonly entries: LRUCache<string, Value>;

  constructor(options: {
    maxBytes: number;
    /** Larger entries are not stored (default: the whole bound) rather than evicting everything else. */
    maxEntryBytes?: number;
    sizeOf: (value: Value, key: string) => number;
  }) {
    this.entries = new LRUCache<string, Value>({
      maxSize: options.maxBytes,
      maxEntrySize: Math.min(options.maxBytes, options.maxEntryBytes ?? options.maxBytes),
      sizeCalculation: (value, key) => Math.max(1, options.sizeOf(value, key) + key.length),
      ttlAutopurge: false,
    });
  }

  get(key: string): Value | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: Value, ttlSeconds: number): void {
    if (ttlSeconds <= 0) return;
    this.entries.set(key, value, { ttl: ttlSeconds * 1000 });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Bytes currently held, by the cache's own accounting. */
  get size(): number {
    return this.entries.calculatedSize;
  }
}
