/**
 * Runs tasks at most `limit` at a time, in the order they were given. A JSON-RPC batch (2025-03-26) holds many
 * requests in one POST; each `tools/call` becomes a call through the gateway, so one batch must not start them all
 * at once.
 */
export function concurrencyLimit(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new TypeError(`concurrencyLimit: limit must be a positive integer, got ${limit}`);
  }
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    running--;
    waiting.shift()?.();
  };
  return <T>(task: () => Promise<T>): Promise<T> => {
    const start = (): Promise<T> => {
      running++;
      let result: Promise<T>;
      try {
        result = task();
      } catch (error) {
        result = Promise.reject(error);
      }
      return result.finally(release);
    };
    if (running < limit) return start();
    return new Promise<T>((resolve, reject) => waiting.push(() => start().then(resolve, reject)));
  };
}
