import type { PromSample } from './prometheus-text.js';
import type { Snapshot } from './sample.js';

/** The Envoy names the view reads (the bootstrap's HCM stat prefix is `ingress_http`). */
const downstream = 'http.ingress_http.downstream_rq_total';
const downstreamTime = 'http.ingress_http.downstream_rq_time';
const extProcPrefix = 'http.ingress_http.ext_proc.';
const extProcCounters = [
  ['streams_started', 'streams'],
  ['streams_failed', 'failed'],
  ['message_timeouts', 'message timeouts'],
  ['failure_mode_allowed', 'failure-mode allowed'],
  ['spurious_msgs_received', 'spurious messages'],
] as const;

/**
 * One API's line of the view, from the engines' counters: requests per second, since start by status class, and
 * latency (ms) over the window from their duration histogram (the API's own: Envoy's clusters are per backend
 * origin, which APIs may share).
 */
export interface ApiRow {
  readonly api: string;
  readonly rate: number;
  readonly byClass: {
    readonly '2xx': number;
    readonly '3xx': number;
    readonly '4xx': number;
    readonly '5xx': number;
  };
  readonly p50: number | undefined;
  readonly p99: number | undefined;
  /** Requests per second the policies answered from the response cache (the backend not called). */
  readonly cachedRate: number;
  /** Since start. */
  readonly cached: number;
}

/** One backend cluster's line, from Envoy's stats: what it sent upstream and how long the backend took (ms). */
export interface ClusterRow {
  readonly cluster: string;
  readonly rate: number;
  readonly total: number;
  readonly errors5xx: number;
  readonly p50: number | undefined;
  readonly p99: number | undefined;
}

export interface LoadView {
  readonly seconds: number;
  readonly gateway: {
    readonly rate: number;
    readonly p50: number | undefined;
    readonly p99: number | undefined;
  };
  readonly apis: readonly ApiRow[];
  readonly clusters: readonly ClusterRow[];
  readonly extProc: readonly { readonly label: string; readonly total: number; readonly rate: number }[];
  /** Policy refusals by element and reason (engine counters), most first. */
  readonly refusals: readonly {
    readonly element: string;
    readonly reason: string;
    readonly total: number;
    readonly rate: number;
  }[];
  readonly engineProblems: readonly string[];
  /** No engine metrics endpoint is configured: the per-API figures cannot be known (not zero). */
  readonly noEngineMetrics: boolean;
}

/** The view between two snapshots: rates and latencies over the time between them, totals as of the later one. */
export function loadView(before: Snapshot, after: Snapshot, apiIds: readonly string[]): LoadView {
  const seconds = Math.max((after.at - before.at) / 1000, 0.001);
  const rate = (now: number, then: number) => Math.max(now - then, 0) / seconds;
  const counter = (snapshot: Snapshot, name: string) => snapshot.counters.get(name) ?? 0;
  const counterRate = (name: string) => rate(counter(after, name), counter(before, name));
  const requests = (snapshot: Snapshot, api: string) =>
    sum(snapshot.engine, 'portcullis_engine_requests_total', (labels) => labels.api === api);

  const apis = apiIds.map((api): ApiRow => {
    const window = subtractBuckets(durationBuckets(after.engine, api), durationBuckets(before.engine, api));
    const statusClass = (digit: string) =>
      sum(
        after.engine,
        'portcullis_engine_requests_total',
        (labels) => labels.api === api && labels.status?.startsWith(digit) === true,
      );
    const cacheHits = (snapshot: Snapshot) =>
      sum(snapshot.engine, 'portcullis_engine_cache_hits_total', (labels) => labels.api === api);
    return {
      api,
      rate: rate(requests(after, api), requests(before, api)),
      cachedRate: rate(cacheHits(after), cacheHits(before)),
      cached: cacheHits(after),
      byClass: {
        '2xx': statusClass('2'),
        '3xx': statusClass('3'),
        '4xx': statusClass('4'),
        '5xx': statusClass('5'),
      },
      p50: quantileMs(window, 0.5),
      p99: quantileMs(window, 0.99),
    };
  });

  // The gateway's backend clusters (api_<id> per backend origin, backend_<id>) that sent anything.
  const clusters = [...after.counters.keys()]
    .flatMap((name) => {
      const match = /^cluster\.((?:api|backend)_.+)\.upstream_rq_total$/.exec(name);
      return match ? [match[1]!] : [];
    })
    .map((cluster): ClusterRow => {
      const latency = after.histograms.get(`cluster.${cluster}.upstream_rq_time`);
      return {
        cluster,
        rate: counterRate(`cluster.${cluster}.upstream_rq_total`),
        total: counter(after, `cluster.${cluster}.upstream_rq_total`),
        errors5xx: counter(after, `cluster.${cluster}.upstream_rq_5xx`),
        p50: latency?.p50,
        p99: latency?.p99,
      };
    })
    .filter((row) => row.total > 0)
    .sort((a, b) => a.cluster.localeCompare(b.cluster));

  const refused = (snapshot: Snapshot) => {
    const byKey = new Map<string, number>();
    for (const sample of snapshot.engine)
      if (sample.name === 'portcullis_policy_element_total' && sample.labels.outcome === 'refused') {
        const key = `${sample.labels.element ?? ''}\u0000${sample.labels.reason ?? ''}`;
        byKey.set(key, (byKey.get(key) ?? 0) + sample.value);
      }
    return byKey;
  };
  const refusedBefore = refused(before);
  const refusals = [...refused(after)]
    .map(([key, total]) => {
      const [element, reason] = key.split('\u0000') as [string, string];
      return { element, reason, total, rate: rate(total, refusedBefore.get(key) ?? 0) };
    })
    .sort((a, b) => b.total - a.total);

  const gatewayLatency = after.histograms.get(downstreamTime);
  return {
    seconds,
    gateway: { rate: counterRate(downstream), p50: gatewayLatency?.p50, p99: gatewayLatency?.p99 },
    apis,
    clusters,
    extProc: extProcCounters.map(([stat, label]) => ({
      label,
      total: counter(after, `${extProcPrefix}${stat}`),
      rate: counterRate(`${extProcPrefix}${stat}`),
    })),
    refusals,
    engineProblems: after.engineProblems,
    noEngineMetrics: after.engineSources === 0,
  };
}

/** The engines' duration histogram of one API (every operation, every engine): cumulative count by upper bound. */
function durationBuckets(samples: readonly PromSample[], api: string): Map<number, number> {
  const buckets = new Map<number, number>();
  for (const sample of samples)
    if (sample.name === 'portcullis_engine_request_duration_seconds_bucket' && sample.labels.api === api) {
      const le = sample.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(sample.labels.le);
      buckets.set(le, (buckets.get(le) ?? 0) + sample.value);
    }
  return buckets;
}

function subtractBuckets(after: Map<number, number>, before: Map<number, number>): [number, number][] {
  return [...after]
    .map(([le, count]): [number, number] => [le, Math.max(count - (before.get(le) ?? 0), 0)])
    .sort((a, b) => a[0] - b[0]);
}

/**
 * The q-quantile in milliseconds of the observations between two snapshots, interpolated within its bucket as
 * Prometheus's histogram_quantile does; none observed: undefined.
 */
export function quantileMs(buckets: readonly [number, number][], q: number): number | undefined {
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [le, count] of buckets) {
    if (count >= rank) {
      // In the +Inf bucket the largest finite bound is all that is known.
      if (!Number.isFinite(le)) return lowerBound * 1000;
      const within = count === lowerCount ? 0 : (rank - lowerCount) / (count - lowerCount);
      return (lowerBound + (le - lowerBound) * within) * 1000;
    }
    lowerBound = le;
    lowerCount = count;
  }
  return lowerBound * 1000;
}

function sum(
  samples: readonly PromSample[],
  name: string,
  test: (labels: PromSample['labels']) => boolean,
): number {
  let total = 0;
  for (const sample of samples) if (sample.name === name && test(sample.labels)) total += sample.value;
  return total;
}

/** The view as a person watching a load test reads it: fixed columns, rates with one decimal, latency in ms. */
export function renderView(view: LoadView, title: string): string {
  const ms = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(1));
  const perSecond = (value: number) => value.toFixed(1);
  const lines = [
    `${title} — rates and latencies over the last ${view.seconds.toFixed(1)} s, totals since start`,
    '',
    `gateway  ${perSecond(view.gateway.rate)} req/s  p50 ${ms(view.gateway.p50)} ms  p99 ${ms(view.gateway.p99)} ms  (Envoy, every route)`,
    '',
    view.noEngineMetrics
      ? noEngineMetricsHint
      : table(
          ['API', 'req/s', 'cached/s', '2xx', '3xx', '4xx', '5xx', 'cached', 'p50 ms', 'p99 ms'],
          view.apis.map((row) => [
            row.api,
            perSecond(row.rate),
            perSecond(row.cachedRate),
            String(row.byClass['2xx']),
            String(row.byClass['3xx']),
            String(row.byClass['4xx']),
            String(row.byClass['5xx']),
            String(row.cached),
            ms(row.p50),
            ms(row.p99),
          ]),
        ),
    '',
    view.clusters.length === 0
      ? 'backends  none called yet'
      : table(
          ['backend cluster', 'req/s', 'total', '5xx', 'p50 ms', 'p99 ms'],
          view.clusters.map((row) => [
            row.cluster,
            perSecond(row.rate),
            String(row.total),
            String(row.errors5xx),
            ms(row.p50),
            ms(row.p99),
          ]),
        ),
    '',
    `ext_proc  ${view.extProc.map((stat) => `${stat.label} ${stat.total} (${perSecond(stat.rate)}/s)`).join('  ')}`,
    '',
    view.refusals.length === 0
      ? 'refusals  none'
      : table(
          ['refused by', 'reason', 'total', '/s'],
          view.refusals.map((row) => [
            row.element,
            row.reason || '-',
            String(row.total),
            perSecond(row.rate),
          ]),
        ),
    ...view.engineProblems.map((problem) => `engine metrics not read: ${problem}`),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * What to do when the per-API lines cannot be shown: they come from the engines' own metrics, which only an engine
 * given a metrics port serves; zeros would read as "no traffic".
 */
const noEngineMetricsHint = [
  "APIs  not shown: the per-API figures (req/s, cache hits, status classes, p50/p99) come from the engines' /metrics,",
  '      and the configuration sets no engine.metricsPort. Add `engine: { metricsPort: 9464 }` (engine N serves',
  '      metricsPort + N) and restart the gateway; docs/observability.md.',
].join('\n');

/** Left-aligned first column, right-aligned numbers, two spaces between. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
