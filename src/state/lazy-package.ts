import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A package loaded the first time it is used, not when its importer is: a state driver (ioredis, lmdb, kafkajs, the
 * OTLP log exporter) is some 40–500 modules that every engine and service would otherwise load at start, whichever
 * backend and loggers its configuration chose. Synchronous (`require`, which also loads an ES module on Node 24),
 * because the stores over a backend are built synchronously; the importer keeps `import type` for the types.
 */
export function lazyPackage<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(name) as T;
    return loaded;
  };
}
