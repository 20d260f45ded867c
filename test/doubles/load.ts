/** A policy that marks every answer with `x-policy: <mark>`, what a load stream records of each answer. */
export const markingPolicy = (mark: string) =>
  `<policies>\n  <inbound><base /></inbound>\n  <backend><base /></backend>\n  <outbound>\n    <base />\n    <set-header name="x-policy" exists-action="override"><value>${mark}</value></set-header>\n  </outbound>\n  <on-error><base /></on-error>\n</policies>\n`;

/** One answered request of a load stream. */
export interface LoadResult {
  /** When it was answered (Date.now()). */
  readonly at: number;
  /** How long it took, in ms. */
  readonly ms: number;
  readonly status: number;
  /** The `x-policy` header, which the tests' policies set to tell configurations apart. */
  readonly mark: string | null;
}

/** One request that got no answer (connection refused or reset, or the client's timeout). */
export interface LoadFailure {
  readonly at: number;
  readonly ms: number;
  readonly error: string;
}

export interface LoadStream {
  readonly results: LoadResult[];
  readonly failures: LoadFailure[];
  stop(): Promise<void>;
}

export interface LoadOptions {
  readonly clients?: number;
  readonly maxRequests?: number;
  readonly maxMs?: number;
  /** Each request is given up after this long: a hang shows as a failure, never as a stuck test. */
  readonly timeoutMs?: number;
}

/** Whether the stream is served again by itself since `since`: its last 20 answers after it all 200. */
export function servedAgainSince(stream: LoadStream, since: number): boolean {
  const recent = stream.results.filter((result) => result.at > since);
  return recent.length >= 20 && recent.slice(-20).every((result) => result.status === 200);
}

/** A steady stream of requests from a few clients until stopped (or a bounded count / time is reached). */
export function load(url: string, options: LoadOptions = {}): LoadStream {
  const { clients = 3, maxRequests = 4000, maxMs = 60_000, timeoutMs = 10_000 } = options;
  const results: LoadResult[] = [];
  const failures: LoadFailure[] = [];
  let stopped = false;
  const started = Date.now();
  const client = async () => {
    while (!stopped && results.length + failures.length < maxRequests && Date.now() - started < maxMs) {
      const sent = Date.now();
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
        await response.arrayBuffer();
        const at = Date.now();
        results.push({ at, ms: at - sent, status: response.status, mark: response.headers.get('x-policy') });
      } catch (error) {
        const at = Date.now();
        failures.push({
          at,
          ms: at - sent,
          error: String((error as Error & { cause?: unknown }).cause ?? error),
        });
        // A refused connection fails at once: do not spin while nothing listens.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  };
  const done = Promise.all(Array.from({ length: clients }, client));
  return {
    results,
    failures,
    async stop() {
      stopped = true;
      await done;
    },
  };
}
