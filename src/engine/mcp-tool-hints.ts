import { type StateBackend, unknownBackend } from '../state/backend.js';
import { RedisByteCache } from '../state/redis-cache.js';

/**
 * What the engine processes sharing a state backend have learned of MCP server tools' `readOnlyHint` (the write rule
 * of `mcp.writeTools: annotations`, mcp-tools.ts), by API and tool: a listing through one engine process tells the
 * others, so a call of a read-only tool is not taken for a write tool on a process that has seen no listing yet.
 * Failures cost only the sharing: a tool the process has not learned counts as a write tool, as without it.
 */
export interface McpToolHints {
  /** The hint the last listing through any engine process gave, if one did. */
  get(apiId: string, tool: string): Promise<boolean | undefined>;
  /** Written in the background: a listing's answer is not held for it. */
  set(apiId: string, tool: string, readOnly: boolean): void;
}

/** A hint outlives the listing that gave it this long (each listing writes it again). */
const HINT_TTL_SECONDS = 7 * 24 * 3600;

const REWRITE_MS = 24 * 3600 * 1000;

const keyOf = (apiId: string, tool: string) => JSON.stringify([apiId, tool]);

/** The hints over the engine's state backend: Redis, the embedded store, or none (one process learns alone). */
export function mcpToolHintsOf(backend: StateBackend): McpToolHints | undefined {
  switch (backend.kind) {
    case 'redis': {
      const cache = new RedisByteCache(backend.connection, 'mcp-tools', 4096);
      // What this process wrote and when: a listing rewrites a hint only when it changed or a day has passed.
      const written = new Map<string, { readOnly: boolean; at: number }>();
      return {
        async get(apiId, tool) {
          const value = await cache.get(keyOf(apiId, tool)).catch(() => undefined);
          return value === undefined ? undefined : value.toString() === '1';
        },
        set(apiId, tool, readOnly) {
          const key = keyOf(apiId, tool);
          const last = written.get(key);
          if (last?.readOnly === readOnly && Date.now() - last.at < REWRITE_MS) return;
          written.set(key, { readOnly, at: Date.now() });
          cache
            .set(key, Buffer.from(readOnly ? '1' : '0'), HINT_TTL_SECONDS)
            .catch(() => written.delete(key));
        },
      };
    }
    case 'embedded': {
      // Rewritten at every listing, so the unsynced environment: a crash of the machine costs one listing.
      const database = backend.store.unsyncedDatabase<boolean>('mcp-tool-hints');
      return {
        async get(apiId, tool) {
          const value = database.get(keyOf(apiId, tool));
          return typeof value === 'boolean' ? value : undefined;
        },
        set(apiId, tool, readOnly) {
          const key = keyOf(apiId, tool);
          if (database.get(key) !== readOnly) database.put(key, readOnly).catch(() => {});
        },
      };
    }
    case 'memory':
      return undefined;
    default:
      return unknownBackend(backend);
  }
}
