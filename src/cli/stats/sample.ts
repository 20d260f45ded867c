import { type PromSample, parsePrometheusText } from './prometheus-text.js';

/** Envoy's latency quantiles of one histogram, in milliseconds (Envoy records request times in ms). */
export interface Quantiles {
  readonly p50: number | undefined;
  readonly p99: number | undefined;
}

/** What one look at the gateway found: Envoy's admin stats and every engine's metrics, at one moment. */
export interface Snapshot {
  /** performance.now() when the look started, for rates between two snapshots. */
  readonly at: number;
  readonly counters: ReadonlyMap<string, number>;
  readonly histograms: ReadonlyMap<string, Quantiles>;
  /** The samples of every engine that answered, together (counters add up across engines). */
  readonly engine: readonly PromSample[];
  /** Engines that did not answer (restarting, or no metrics port): named in the view, not fatal. */
  readonly engineProblems: readonly string[];
  /** How many engine metrics endpoints there are to read (none without `engine.metricsPort`). */
  readonly engineSources: number;
}

export interface Sources {
  /** Envoy's admin listener, e.g. `http://127.0.0.1:9901`. */
  readonly admin: string;
  /** Each engine's metrics URL. */
  readonly engines: readonly string[];
}

interface EnvoyStatsJson {
  stats: (
    | { name: string; value: number }
    | {
        histograms: {
          supported_quantiles: number[];
          computed_quantiles: {
            name: string;
            values: { interval: number | null; cumulative: number | null }[];
          }[];
        };
      }
  )[];
}

const fetchTimeoutMs = 3000;

/** Reads Envoy's `/stats?format=json` and the engines' `/metrics`, in parallel. Envoy not answering is an error. */
export async function takeSnapshot(sources: Sources): Promise<Snapshot> {
  const at = performance.now();
  const [envoy, engines] = await Promise.all([
    envoyStats(sources.admin),
    Promise.all(
      sources.engines.map(async (url) => {
        try {
          const response = await fetch(url, { signal: AbortSignal.timeout(fetchTimeoutMs) });
          if (!response.ok) return { problem: `${url}: HTTP ${response.status}` };
          return { samples: parsePrometheusText(await response.text(), url) };
        } catch (error) {
          return { problem: `${url}: ${describeFailure(error)}` };
        }
      }),
    ),
  ]);
  return {
    at,
    ...envoy,
    engine: engines.flatMap((engine) => engine.samples ?? []),
    engineProblems: engines.flatMap((engine) => (engine.problem === undefined ? [] : [engine.problem])),
    engineSources: sources.engines.length,
  };
}

async function envoyStats(admin: string): Promise<Pick<Snapshot, 'counters' | 'histograms'>> {
  const url = `${admin}/stats?format=json&usedonly`;
  let body: EnvoyStatsJson;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(fetchTimeoutMs) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    body = (await response.json()) as EnvoyStatsJson;
  } catch (error) {
    throw new Error(
      `Envoy's admin stats at ${url} did not answer (${describeFailure(error)}): is the gateway up?`,
    );
  }
  const counters = new Map<string, number>();
  const histograms = new Map<string, Quantiles>();
  for (const entry of body.stats ?? []) {
    if ('name' in entry) {
      counters.set(entry.name, entry.value);
      continue;
    }
    const { supported_quantiles: quantiles, computed_quantiles: computed } = entry.histograms;
    const p50 = quantiles.indexOf(50);
    const p99 = quantiles.indexOf(99);
    // The last flush interval's quantiles say what happens now; before any, the cumulative ones since start.
    const pick = (values: { interval: number | null; cumulative: number | null }[], index: number) =>
      index < 0 ? undefined : (values[index]?.interval ?? values[index]?.cumulative ?? undefined);
    for (const histogram of computed)
      histograms.set(histogram.name, { p50: pick(histogram.values, p50), p99: pick(histogram.values, p99) });
  }
  return { counters, histograms };
}

function describeFailure(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return cause ?? error.message;
  }
  return String(error);
}
