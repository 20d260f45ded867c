import type { RedisConnection } from './redis-connection.js';

/**
 * A byte cache in Redis with a TTL per entry: the external cache of cache-lookup/cache-store (`resp:` keys) and of
 * cache-lookup-value/cache-store-value/cache-remove-value (`val:` keys). Entries larger than `maxEntryBytes` are
 * not stored. Failures throw StateUnavailableError (a cache caller treats that as a miss).
 */
export class RedisByteCache {
  constructor(
    private readonly connection: RedisConnection,
    private readonly namespace: string,
    private readonly maxEntryBytes: number,
  ) {}

  async get(key: string): Promise<Buffer | undefined> {
    const value = await this.connection.run('cache get', (client) =>
      client.getBuffer(`${this.namespace}:${key}`),
    );
    return value ?? undefined;
  }

  async set(key: string, value: Buffer, ttlSeconds: number): Promise<void> {
    if (ttlSeconds <= 0 || value.length > this.maxEntryBytes) return;
    await this.connection.run('cache set', (client) =>
      client.set(`${this.namespace}:${key}`, value, 'PX', Math.round(ttlSeconds * 1000)),
    );
  }

  async delete(key: string): Promise<void> {
    await this.connection.run('cache delete', (client) => client.del(`${this.namespace}:${key}`));
  }
}
