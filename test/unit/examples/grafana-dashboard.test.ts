import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../../../src/cli/stats/prometheus-text.js';
import { ElementCounters } from '../../../src/engine/element-counters.js';
import { EngineMetrics } from '../../../src/engine/metrics.js';
import { ServiceMetrics } from '../../../src/service/metrics.js';

/**
 * The Grafana dashboard of examples/observability (issue #34, item 9): every metric its PromQL names is one the code
 * exports — the engine's and the service's, read from their real registries after one request of each kind, and
 * Envoy's, from the names the pinned Envoy serves (test/fixtures/envoy-prometheus-names.txt) — and every label a
 * query filters or groups the engine's metrics by is one they carry. A renamed metric or label fails here.
 */

const dashboard = JSON.parse(
  readFileSync(
    fileURLToPath(new URL('../../../examples/observability/grafana-dashboard.json', import.meta.url)),
    'utf8',
  ),
) as {
  panels: { title: string; targets: { expr: string }[] }[];
  templating: { list: { query?: unknown }[] };
};

/** The engine's and service's series as served: name → the label names seen on it. */
async function exportedSeries(): Promise<Map<string, Set<string>>> {
  const elements = new ElementCounters();
  elements.count('rate-limit-by-key', 'refused', 'RateLimitExceeded');
  const engine = new EngineMetrics(elements, () => 1);
  engine.recordExchange({
    requestId: 'r',
    method: 'GET',
    path: '/courses/api/Course',
    api: 'courses',
    operation: 'list-courses',
    outcome: 'responded',
    status: 200,
    cached: true,
    durationMs: 3,
    lastError: { source: 'rate-limit-by-key', reason: 'RateLimitExceeded', message: 'm' },
  });
  engine.emit({ namespace: 'llm', name: 'Total Tokens', value: 12, dimensions: [['API ID', 'courses']] });
  const text = `${await engine.render()}\n${await new ServiceMetrics().registry.metrics()}`;
  const series = new Map<string, Set<string>>();
  for (const sample of parsePrometheusText(text, 'metrics')) {
    const labels = series.get(sample.name) ?? new Set<string>();
    for (const label of Object.keys(sample.labels)) labels.add(label);
    series.set(sample.name, labels);
  }
  return series;
}

const envoyNames = new Set(
  readFileSync(fileURLToPath(new URL('../../fixtures/envoy-prometheus-names.txt', import.meta.url)), 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .flatMap((line) => {
      const [name, type] = line.split(' ') as [string, string];
      return type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
    }),
);

/** Each metric a query selects (`name{…}` or `name[…]`), with the label names its matchers and `by (…)` use. */
function selections(expr: string): { metric: string; labels: string[] }[] {
  const grouped = [...expr.matchAll(/\bby\s*\(([^)]*)\)/g)].flatMap((m) =>
    m[1]!.split(',').map((label) => label.trim()),
  );
  // Grafana's label_values(metric, label) of a variable.
  const variable = /^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$/.exec(
    expr.trim(),
  );
  if (variable) return [{ metric: variable[1]!, labels: [variable[2]!] }];
  // A metric alone inside a call, `sum(name)` (not a `by (label)` grouping).
  const bare = [...expr.matchAll(/(?<!\bby\s*|\bwithout\s*)\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\)/g)].map(
    (m) => ({
      metric: m[1]!,
      labels: grouped.filter((label) => label !== 'le'),
    }),
  );
  return [...expr.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?\s*\[/g)]
    .concat([...expr.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})(?!\s*\[)/g)])
    .map((m) => ({
      metric: m[1]!,
      labels: [
        ...[...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!),
        ...grouped.filter((label) => label !== 'le'),
      ],
    }))
    .concat(bare);
}

const expressions = [
  ...dashboard.panels.flatMap((panel) =>
    panel.targets.map((target) => ({ panel: panel.title, expr: target.expr })),
  ),
  ...dashboard.templating.list.flatMap((variable) =>
    typeof variable.query === 'object' && variable.query !== null && 'query' in variable.query
      ? [{ panel: 'variable', expr: String((variable.query as { query: string }).query) }]
      : [],
  ),
];

describe('examples/observability/grafana-dashboard.json', () => {
  it('covers what the README documents: rate, errors by reason, p50/p99, ext_proc, refusals, token usage, cache hits', () => {
    const all = expressions.map((e) => e.expr).join('\n');
    for (const metric of [
      'portcullis_engine_requests_total',
      'portcullis_engine_request_duration_seconds_bucket',
      'envoy_http_ext_proc_streams_started',
      'portcullis_policy_element_total',
      'portcullis_custom_metric_total',
      'portcullis_engine_cache_hits_total',
    ])
      expect(all).toContain(metric);
    expect(all).toContain('histogram_quantile(0.5,');
    expect(all).toContain('histogram_quantile(0.99,');
    expect(all).toMatch(/by \(api, reason\)/);
  });

  it('names only metrics the code and the pinned Envoy export, and only labels the engine’s metrics carry', async () => {
    const series = await exportedSeries();
    const problems: string[] = [];
    for (const { panel, expr } of expressions) {
      const selected = selections(expr);
      expect(selected.length, `${panel}: ${expr}`).toBeGreaterThan(0);
      for (const { metric, labels } of selected) {
        if (metric.startsWith('envoy_')) {
          if (!envoyNames.has(metric)) problems.push(`${panel}: ${metric} is not a metric Envoy serves`);
          continue;
        }
        const known = series.get(metric);
        if (known === undefined) {
          problems.push(`${panel}: ${metric} is not a metric the engine or the service exports`);
          continue;
        }
        for (const label of labels)
          if (!known.has(label))
            problems.push(`${panel}: ${metric} has no label "${label}" (it has ${[...known].join(', ')})`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('would catch a renamed metric', () => {
    const { metric } = selections('sum(rate(portcullis_engine_requests_totl{api="x"}[5m]))')[0]!;
    expect(metric).toBe('portcullis_engine_requests_totl');
  });
});
