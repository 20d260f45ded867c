/**
 * The process's Prometheus metrics, also pushed to an OpenTelemetry collector over OTLP/HTTP every interval.
 *
 * One source of truth: the metrics stay defined once, in prom-client (engine/metrics.ts, service/metrics.ts), which
 * serves `/metrics` as it always did; a MetricProducer reads the same registries at each export and hands the SDK's
 * reader their series as OTLP data (counter → monotonic cumulative sum, gauge → gauge, histogram → explicit-bucket
 * histogram). Moving the definitions to OTel instruments instead would have needed OTel's Prometheus exporter for
 * `/metrics`, which renames series (unit and `_total` suffixes) and drops prom-client's per-series collectors
 * (emit-metric's dimensions are labels chosen per emission, element counters read at scrape time): the names the
 * docs/observability.md lists and operators' queries use would change. Observable instruments fed from the registry would lose the
 * histograms (there is no observable histogram). The producer keeps the names, labels and bucket boundaries, so a
 * series reads the same in Prometheus and behind the collector. Nothing here runs without `telemetry.otlp`.
 */

import type { HrTime } from '@opentelemetry/api';
import { ValueType } from '@opentelemetry/api';
import { hrTime } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  type CollectionResult,
  type DataPoint,
  DataPointType,
  type Histogram,
  MeterProvider,
  type MetricData,
  type MetricProducer,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import type { MetricObjectWithValues, MetricValueWithName, Registry } from 'prom-client';
import { serviceInstanceId } from './tracing.js';

export interface MetricsExport {
  /** The collector's OTLP/HTTP metrics URL (`…/v1/metrics`). */
  readonly metricsUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  /** `service.name` of this process's metrics. */
  readonly serviceName: string;
  readonly intervalMs: number;
}

export interface ProcessMetricsExport {
  /** Exports now (a test, a stopping process). */
  flush(): Promise<void>;
  /** Exports a last time, then stops. */
  shutdown(): Promise<void>;
}

/**
 * Starts exporting what `registries()` holds at each interval. A function, because the engine's registry belongs to
 * the engine state and a reload may replace it (its counts start again: the series get a new start time).
 */
export function startMetricsExport(
  settings: MetricsExport,
  registries: () => readonly Registry[],
): ProcessMetricsExport {
  const reader = new PeriodicExportingMetricReader({
    exporter: new OTLPMetricExporter({ url: settings.metricsUrl, headers: { ...settings.headers } }),
    exportIntervalMillis: settings.intervalMs,
    // An export that hangs is abandoned before the next one is due.
    exportTimeoutMillis: Math.min(settings.intervalMs, 10_000),
    metricProducers: [new PrometheusRegistryProducer(registries)],
  });
  // The provider's own meter has no instruments: it gives the reader the resource and drives the schedule.
  const provider = new MeterProvider({
    resource: resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.instance.id': serviceInstanceId,
    }),
    readers: [reader],
  });
  return {
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

/** The instrumentation scope the converted series are reported under. */
const scope = { name: 'portcullis.prometheus' };

/** Reads prom-client registries as OTLP metric data (see the file comment). */
export class PrometheusRegistryProducer implements MetricProducer {
  /** When each registry was first read: the start of its cumulative series. */
  private readonly started = new WeakMap<Registry, HrTime>();

  constructor(private readonly registries: () => readonly Registry[]) {}

  async collect(): Promise<CollectionResult> {
    const metrics: MetricData[] = [];
    const errors: unknown[] = [];
    const now = hrTime();
    for (const registry of this.registries()) {
      let startTime = this.started.get(registry);
      if (startTime === undefined) {
        startTime = now;
        this.started.set(registry, startTime);
      }
      try {
        for (const family of await registry.getMetricsAsJSON()) {
          const converted = otlpMetric(family, startTime, now);
          if (converted) metrics.push(converted);
        }
      } catch (error) {
        // One registry failing to collect leaves the others' series in this export.
        errors.push(error);
      }
    }
    // The resource is the provider's (the reader ignores a producer's).
    return {
      resourceMetrics: { resource: resourceFromAttributes({}), scopeMetrics: [{ scope, metrics }] },
      errors,
    };
  }
}

type Family = MetricObjectWithValues<MetricValueWithName<string>>;

/** One Prometheus family as OTLP data; undefined for a type OTLP's SDK data cannot carry (summary: none is registered). */
export function otlpMetric(family: Family, startTime: HrTime, endTime: HrTime): MetricData | undefined {
  const descriptor = {
    name: family.name,
    description: family.help,
    unit: unitOf(family.name),
    valueType: ValueType.DOUBLE,
  };
  const point = <T>(labels: Family['values'][number]['labels'], value: T): DataPoint<T> => ({
    startTime,
    endTime,
    attributes: attributesOf(labels),
    value,
  });
  // prom-client's typings declare a numeric enum; what its metrics carry is the Prometheus type's name.
  switch (family.type as unknown as string) {
    case 'counter':
      return {
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.SUM,
        isMonotonic: true,
        dataPoints: family.values.map((sample) => point(sample.labels, sample.value)),
      };
    case 'gauge':
      return {
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.GAUGE,
        dataPoints: family.values.map((sample) => point(sample.labels, sample.value)),
      };
    case 'histogram':
      return {
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: histogramSeries(family).map((series) => point(series.labels, series.histogram)),
      };
    default:
      return undefined;
  }
}

/**
 * A Prometheus histogram's samples (`_bucket` per `le`, cumulative; `_sum`; `_count`) regrouped per series as OTLP
 * explicit buckets: the finite bounds, and each bucket's own count (the difference of consecutive cumulative ones).
 */
function histogramSeries(
  family: Family,
): { labels: Record<string, string | number>; histogram: Histogram }[] {
  const series = new Map<
    string,
    { labels: Record<string, string | number>; buckets: [number, number][]; sum: number; count: number }
  >();
  for (const sample of family.values) {
    const { le, ...labels } = sample.labels as Record<string, string | number>;
    const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
    let entry = series.get(key);
    if (!entry) {
      entry = { labels, buckets: [], sum: 0, count: 0 };
      series.set(key, entry);
    }
    if (sample.metricName === `${family.name}_bucket` && le !== undefined)
      entry.buckets.push([le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), sample.value]);
    else if (sample.metricName === `${family.name}_sum`) entry.sum = sample.value;
    else if (sample.metricName === `${family.name}_count`) entry.count = sample.value;
  }
  return [...series.values()].map(({ labels, buckets, sum, count }) => {
    buckets.sort(([a], [b]) => a - b);
    const boundaries: number[] = [];
    const counts: number[] = [];
    let below = 0;
    for (const [bound, cumulative] of buckets) {
      if (!Number.isFinite(bound)) continue;
      boundaries.push(bound);
      counts.push(cumulative - below);
      below = cumulative;
    }
    // The last bucket (above every bound) holds the rest of the observations.
    counts.push(count - below);
    return { labels, histogram: { buckets: { boundaries, counts }, sum, count } };
  });
}

function attributesOf(labels: Family['values'][number]['labels']): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(labels))
    if (value !== undefined) attributes[name] = String(value);
  return attributes;
}

/** The UCUM unit Prometheus' naming convention states in the name's suffix. */
function unitOf(name: string): string {
  if (/_seconds(_total)?$/.test(name)) return 's';
  if (/_bytes(_total)?$/.test(name)) return 'By';
  return '';
}
