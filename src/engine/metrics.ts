import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricSink } from '../policy/index.js';
import type { ElementCounters } from './element-counters.js';
import type { ExchangeSummary } from './policy-exchange.js';

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
 * The engine's Prometheus metrics: requests by API, operation, outcome and status; what each policy element
 * allowed, refused and failed, with the reason; open ext_proc streams. Envoy's own counters stay on its admin port.
 */
export class EngineMetrics {
  /** By the label values joined with NUL: the Prometheus labels are rendered only when scraped. */
  private readonly requests = new Map<string, { labels: Record<string, string>; count: number }>();
  /** Custom metrics summed per namespace, name and dimensions. */
  private readonly custom = new Map<string, { labels: Record<string, string>; sum: number; count: number }>();
  /** Emissions not kept because MAX_CUSTOM_SERIES series exist. */
  private customDropped = 0;

  constructor(
    private readonly elements: ElementCounters,
    private readonly activeStreams: () => number = () => 0,
  ) {}

  recordExchange(summary: ExchangeSummary): void {
    const api = summary.api ?? '';
    const operation = summary.operation ?? '';
    const status = summary.status === undefined ? '' : String(summary.status);
    const reason = summary.lastError?.reason ?? '';
    const key = `${api}\u0000${operation}\u0000${summary.outcome}\u0000${status}\u0000${reason}`;
    const entry = this.requests.get(key);
    if (entry) entry.count++;
    else
      this.requests.set(key, {
        labels: { api, operation, outcome: summary.outcome, status, reason },
        count: 1,
      });
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

  render(): string {
    const lines = [
      '# HELP portcullis_engine_requests_total Requests the engine saw, by API, operation, outcome, final status and LastError reason.',
      '# TYPE portcullis_engine_requests_total counter',
      ...[...this.requests.values()].map(
        (entry) => `portcullis_engine_requests_total{${labels(entry.labels)}} ${entry.count}`,
      ),
      '# HELP portcullis_policy_element_total Policy element executions by element, outcome and reason.',
      '# TYPE portcullis_policy_element_total counter',
      ...[...this.elements.entries()].map(
        (entry) =>
          `portcullis_policy_element_total{${labels({ element: entry.element, outcome: entry.outcome, reason: entry.reason })}} ${entry.value}`,
      ),
      '# HELP portcullis_custom_metric_total Sum of the values emitted by emit-metric and llm-emit-token-metric, by namespace, name and dimensions.',
      '# TYPE portcullis_custom_metric_total counter',
      ...[...this.custom.values()].map(
        (entry) => `portcullis_custom_metric_total{${labels(entry.labels)}} ${entry.sum}`,
      ),
      '# HELP portcullis_custom_metric_emissions_total How many times each custom metric was emitted.',
      '# TYPE portcullis_custom_metric_emissions_total counter',
      ...[...this.custom.values()].map(
        (entry) => `portcullis_custom_metric_emissions_total{${labels(entry.labels)}} ${entry.count}`,
      ),
      '# HELP portcullis_custom_metric_dropped_total Custom metric emissions not kept: too many distinct series.',
      '# TYPE portcullis_custom_metric_dropped_total counter',
      `portcullis_custom_metric_dropped_total ${this.customDropped}`,
      '# HELP portcullis_engine_streams_active ext_proc streams open now.',
      '# TYPE portcullis_engine_streams_active gauge',
      `portcullis_engine_streams_active ${this.activeStreams()}`,
    ];
    return `${lines.join('\n')}\n`;
  }
}

function labels(values: Record<string, string>): string {
  return Object.entries(values)
    .map(
      ([name, value]) =>
        `${name}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
    )
    .join(',');
}

/** Serves `GET /metrics` on a loopback port. */
export async function serveMetrics(metrics: EngineMetrics, host: string, port: number): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/metrics') {
      response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      response.end(metrics.render());
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('not found\n');
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  return Object.assign(server, { port: (server.address() as AddressInfo).port });
}
