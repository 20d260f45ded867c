import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { MetricSink } from '../policy/index.js';
import type { ElementCounters } from './element-counters.js';
import type { ExchangeSummary } from './exchange/summary.js';

/** A custom metric as emit-metric and llm-emit-token-metric give it. */
export type CustomMetric = Parameters<MetricSink['emit']>[0];

/** Distinct custom series kept at most: a dimension fed by a client's input must not grow memory without bound. */
export const MAX_CUSTOM_SERIES = 10_000;

/** A Prometheus label name for a dimension name ("API ID" → `api_id`); never one of the family's own labels. */
export function dimensionLabel(name: string): string {
  let label = name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (label === '' || /^[0-9]/.test(label) || label.startsWith('__')) label = `dimension_${label}`;
  return label === 'namespace' || label === 'name' ? `dimension_${label}` : label;
}

/**
 * The engine's Prometheus metrics, kept in a prom-client registry: requests by API, operation, outcome and status;
 * their duration by API and operation; what each policy element allowed, refused and failed, with the reason; custom
 * metrics; open ext_proc streams. Envoy's own counters stay on its admin port. Each engine state has its own
 * registry, so the counts carry on across reloads that keep the state.
 */
export class EngineMetrics implements MetricsSource {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'portcullis_engine_requests_total',
    help: 'Requests the engine saw, by API, operation, outcome, final status and LastError reason.',
    labelNames: ['api', 'operation', 'outcome', 'status', 'reason'] as const,
    registers: [this.registry],
  });
  private readonly durations = new Histogram({
    name: 'portcullis_engine_request_duration_seconds',
    help: 'Time from the request headers reaching the engine to the end of the exchange (backend included), by API and operation.',
    labelNames: ['api', 'operation'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  private readonly cacheHits = new Counter({
    name: 'portcullis_engine_cache_hits_total',
    help: 'Requests the policies answered from the response cache (the backend not called), by API and operation.',
    labelNames: ['api', 'operation'] as const,
    registers: [this.registry],
  });
  /** Custom metrics summed per namespace, name and dimensions. */
  private readonly custom = new Map<string, { labels: Record<string, string>; sum: number; count: number }>();
  /** Emissions not kept because MAX_CUSTOM_SERIES series exist. */
  private customDropped = 0;

  constructor(elements: ElementCounters, activeStreams: () => number = () => 0) {
    // The policy code counts into ElementCounters (cheap, no label validation per element run); read when scraped.
    new Counter({
      name: 'portcullis_policy_element_total',
      help: 'Policy element executions by element, outcome and reason.',
      labelNames: ['element', 'outcome', 'reason'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const entry of elements.entries())
          this.inc({ element: entry.element, outcome: entry.outcome, reason: entry.reason }, entry.value);
      },
    });
    // A dimension is a label, and each emit-metric chooses its own dimensions: prom-client's Counter wants its label
    // names up front, so these families are rendered by collectors that give the registry their series as they are.
    this.registry.registerMetric(
      dynamicCounter(
        'portcullis_custom_metric_total',
        'Sum of the values emitted by emit-metric and llm-emit-token-metric, by namespace, name and dimensions.',
        () => [...this.custom.values()].map((entry) => ({ labels: entry.labels, value: entry.sum })),
      ),
    );
    this.registry.registerMetric(
      dynamicCounter(
        'portcullis_custom_metric_emissions_total',
        'How many times each custom metric was emitted.',
        () => [...this.custom.values()].map((entry) => ({ labels: entry.labels, value: entry.count })),
      ),
    );
    this.registry.registerMetric(
      dynamicCounter(
        'portcullis_custom_metric_dropped_total',
        'Custom metric emissions not kept: too many distinct series.',
        () => [{ labels: {}, value: this.customDropped }],
      ),
    );
    new Gauge({
      name: 'portcullis_engine_streams_active',
      help: 'ext_proc streams open now.',
      registers: [this.registry],
      collect() {
        this.set(activeStreams());
      },
    });
  }

  recordExchange(summary: ExchangeSummary): void {
    const api = summary.api ?? '';
    const operation = summary.operation ?? '';
    this.requests.inc({
      api,
      operation,
      outcome: summary.outcome,
      status: summary.status === undefined ? '' : String(summary.status),
      reason: summary.lastError?.reason ?? '',
    });
    if (summary.cached === true) this.cacheHits.inc({ api, operation });
    if (summary.durationMs !== undefined)
      this.durations.observe({ api, operation }, summary.durationMs / 1000);
  }

  /** emit-metric, llm-emit-token-metric: the value is added to its series (namespace, name, dimensions). */
  emit(metric: CustomMetric): void {
    const labels: Record<string, string> = { namespace: metric.namespace, name: metric.name };
    for (const [dimension, value] of metric.dimensions) labels[dimensionLabel(dimension)] = value;
    const key = Object.entries(labels)
      .map(([name, value]) => `${name}\u0000${value}`)
      .join('\u0000');
    const entry = this.custom.get(key);
    if (entry) {
      entry.sum += metric.value;
      entry.count++;
    } else if (this.custom.size >= MAX_CUSTOM_SERIES) this.customDropped++;
    else this.custom.set(key, { labels, sum: metric.value, count: 1 });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}

/** What a metrics endpoint serves: the Prometheus text of one or more registries. */
export interface MetricsSource {
  render(): Promise<string>;
}

/**
 * A counter family whose series each carry their own label names, in the shape the registry renders
 * (`name`, `help`, `type`, `get()`): prom-client's own Counter checks every label against names fixed up front.
 */
function dynamicCounter(
  name: string,
  help: string,
  series: () => { labels: Record<string, string>; value: number }[],
): Counter {
  const family = {
    name,
    help,
    type: 'counter',
    get: () => ({ name, help, type: 'counter', aggregator: 'sum', values: series() }),
  };
  return family as unknown as Counter;
}

/** Node's process metrics (CPU, memory, event-loop delay, handles), once per process whatever the engine state. */
let processRegistry: Registry | undefined;
export function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** Serves `GET /metrics` (the source's metrics and the process's) on a loopback port. */
export async function serveMetrics(source: MetricsSource, host: string, port: number): Promise<Server> {
  const process = processMetrics();
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/metrics') {
      Promise.all([source.render(), process.metrics()]).then(
        ([own, processText]) => {
          response.writeHead(200, { 'content-type': Registry.PROMETHEUS_CONTENT_TYPE });
          response.end(`${own}\n${processText}`);
        },
        (error: unknown) => {
          response.writeHead(500, { 'content-type': 'text/plain' });
          response.end(`metrics failed: ${error instanceof Error ? error.message : String(error)}\n`);
        },
      );
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('not found\n');
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  return Object.assign(server, { port: (server.address() as AddressInfo).port });
}
