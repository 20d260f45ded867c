import type {
  BackendLookup,
  CachedResponse,
  HttpFetcher,
  Logger,
  PolicyCounters,
  PolicyServices,
  TraceSink,
} from '../policy/index.js';
import { MemoryCache } from '../state/memory-cache.js';

/** Structured log lines on stderr, one JSON object each. */
export const jsonLogger: Logger = {
  debug: () => {},
  info: (message, fields) => log('info', message, fields),
  warn: (message, fields) => log('warn', message, fields),
  error: (message, fields) => log('error', message, fields),
};

function log(level: string, message: string, fields?: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
}

/** Per element × outcome × reason counts, read by the metrics endpoint. */
export class ElementCounters implements PolicyCounters {
  readonly counts = new Map<string, number>();

  count(element: string, outcome: 'allowed' | 'refused' | 'failed', reason = ''): void {
    const key = `${element}\u0000${outcome}\u0000${reason}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  *entries(): Generator<{ element: string; outcome: string; reason: string; value: number }> {
    for (const [key, value] of this.counts) {
      const [element, outcome, reason] = key.split('\u0000') as [string, string, string];
      yield { element, outcome, reason, value };
    }
  }
}

const fetchWithTimeout: HttpFetcher = async (request) => {
  const response = await fetch(request.url, {
    method: request.method,
    headers: request.headers.map(([name, value]) => [name, value] as [string, string]),
    ...(request.body ? { body: request.body } : {}),
    signal: AbortSignal.timeout(request.timeoutMs),
    redirect: 'manual',
  }).catch((error: unknown) => {
    if (error instanceof DOMException && error.name === 'TimeoutError')
      throw Object.assign(new Error('timeout'), { code: 'TIMEOUT' });
    throw error;
  });
  return {
    status: response.status,
    reason: response.statusText,
    headers: [...response.headers.entries()],
    body: Buffer.from(await response.arrayBuffer()),
  };
};

export interface EngineServicesOptions {
  readonly backends: ReadonlyMap<string, string>;
  readonly cacheBytes?: number;
  readonly logger?: Logger;
  readonly trace?: TraceSink;
}

/** The engine's policy services: in-process caches bounded in bytes, named backends, fetch, clock, log, counters. */
export function createEngineServices(
  options: EngineServicesOptions,
): PolicyServices & { counters: ElementCounters } {
  const maxBytes = options.cacheBytes ?? 64 * 1024 * 1024;
  const responses = new MemoryCache<CachedResponse>({
    maxBytes,
    sizeOf: (value) =>
      value.body.length + value.headers.reduce((sum, [name, v]) => sum + name.length + v.length, 0),
  });
  const values = new MemoryCache<{ value: unknown }>({
    maxBytes,
    sizeOf: (entry) => JSON.stringify(entry.value ?? null)?.length ?? 16,
  });
  const backends: BackendLookup = {
    get: (id) => {
      const url = options.backends.get(id);
      return url === undefined ? undefined : { id, url };
    },
  };
  const logger = options.logger ?? jsonLogger;
  return {
    responseCache: {
      get: async (key) => responses.get(key),
      set: async (key, value, ttl) => responses.set(key, value, ttl),
    },
    valueCache: {
      get: async (key) => values.get(key)?.value,
      set: async (key, value, ttl) => values.set(key, { value }, ttl),
      delete: async (key) => values.delete(key),
    },
    backends,
    fetch: fetchWithTimeout,
    clock: { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) },
    logger,
    trace: options.trace ?? { write: (entry) => logger.info('trace', { ...entry }) },
    counters: new ElementCounters(),
  };
}
