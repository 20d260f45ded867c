import { describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../../../src/cli/stats/prometheus-text.js';
import type { Snapshot } from '../../../src/cli/stats/sample.js';
import { loadView, quantileMs, renderView } from '../../../src/cli/stats/view.js';

function snapshot(
  at: number,
  engineText: string,
  counters: Record<string, number>,
  engineSources = 1,
): Snapshot {
  return {
    engineSources,
    at,
    counters: new Map(Object.entries(counters)),
    histograms: new Map([['cluster.api_courses.upstream_rq_time', { p50: 2, p99: 9.5 }]]),
    engine: parsePrometheusText(engineText, 'engine'),
    engineProblems: [],
  };
}

const engineText = (ok: number, refused: number, fast: number, slow: number, cached = 0) => `# HELP x y
portcullis_engine_cache_hits_total{api="courses",operation="list"} ${cached}
portcullis_engine_requests_total{api="courses",operation="list",outcome="forwarded",status="200",reason=""} ${ok}
portcullis_engine_requests_total{api="courses",operation="list",outcome="responded",status="429",reason="RateLimitExceeded"} ${refused}
portcullis_engine_request_duration_seconds_bucket{le="0.01",api="courses",operation="list"} ${fast}
portcullis_engine_request_duration_seconds_bucket{le="0.1",api="courses",operation="list"} ${fast + slow}
portcullis_engine_request_duration_seconds_bucket{le="+Inf",api="courses",operation="list"} ${fast + slow}
portcullis_policy_element_total{element="rate-limit-by-key",outcome="refused",reason="RateLimitExceeded"} ${refused}
portcullis_custom_metric_total{namespace="llm",name="say \\"hi\\"\\n"} 3
`;

describe('portcullis stats view', () => {
  it('reads the Prometheus text format with escaped label values, and names the line it cannot read', () => {
    const samples = parsePrometheusText(engineText(1, 0, 1, 0), 'engine');
    expect(samples.at(-1)).toEqual({
      name: 'portcullis_custom_metric_total',
      labels: { namespace: 'llm', name: 'say "hi"\n' },
      value: 3,
    });
    expect(() => parsePrometheusText('ok 1\nnot a sample\n', 'http://e/metrics')).toThrow(
      'http://e/metrics: line 2 is not a Prometheus sample: not a sample',
    );
  });

  it('interpolates quantiles within buckets as histogram_quantile does', () => {
    expect(
      quantileMs(
        [
          [0.01, 0],
          [0.1, 0],
          [Number.POSITIVE_INFINITY, 0],
        ],
        0.5,
      ),
    ).toBeUndefined();
    // 100 observations: 90 under 10 ms, 10 between 10 and 100 ms.
    const buckets: [number, number][] = [
      [0.01, 90],
      [0.1, 100],
      [Number.POSITIVE_INFINITY, 100],
    ];
    expect(quantileMs(buckets, 0.5)).toBeCloseTo(((0.5 * 100 * 0.01) / 90) * 1000, 6);
    expect(quantileMs(buckets, 0.99)).toBeCloseTo((0.01 + 0.09 * 0.9) * 1000, 6);
  });

  it('turns two snapshots into rates over the window, totals, latency, clusters, ext_proc and refusals', () => {
    const before = snapshot(0, engineText(100, 5, 100, 0, 60), {
      'http.ingress_http.downstream_rq_total': 105,
      'cluster.api_courses.upstream_rq_total': 100,
      'http.ingress_http.ext_proc.streams_started': 105,
    });
    const after = snapshot(2000, engineText(300, 25, 290, 10, 240), {
      'http.ingress_http.downstream_rq_total': 325,
      'cluster.api_courses.upstream_rq_total': 300,
      'cluster.api_courses.upstream_rq_5xx': 1,
      'http.ingress_http.ext_proc.streams_started': 325,
      'http.ingress_http.ext_proc.message_timeouts': 2,
    });
    const view = loadView(before, after, ['courses', 'idle']);
    expect(view.apis[0]).toMatchObject({
      api: 'courses',
      rate: 110,
      cachedRate: 90,
      cached: 240,
      byClass: { '2xx': 300, '4xx': 25 },
    });
    expect(view.apis[1]).toMatchObject({ api: 'idle', rate: 0, p50: undefined });
    expect(view.clusters).toEqual([
      { cluster: 'api_courses', rate: 100, total: 300, errors5xx: 1, p50: 2, p99: 9.5 },
    ]);
    expect(view.refusals).toEqual([
      { element: 'rate-limit-by-key', reason: 'RateLimitExceeded', total: 25, rate: 10 },
    ]);
    const text = renderView(view, 'stats');
    expect(text).toContain('gateway  110.0 req/s  p50 - ms  p99 - ms');
    // API  req/s  cached/s  2xx  3xx  4xx  5xx  cached  p50  p99: the cache hits beside the traffic they served.
    expect(text).toMatch(/^API\s+req\/s\s+cached\/s\s+2xx\s+3xx\s+4xx\s+5xx\s+cached\s+p50 ms\s+p99 ms$/m);
    expect(text).toMatch(/^courses\s+110\.0\s+90\.0\s+300\s+0\s+25\s+0\s+240\s+\d+\.\d\s+\d+\.\d$/m);
    expect(text).toMatch(/^idle\s+0\.0\s+0\.0\s+0\s+0\s+0\s+0\s+0\s+-\s+-$/m);
    expect(text).toMatch(/^api_courses\s+100\.0\s+300\s+1\s+2\.0\s+9\.5$/m);
    expect(text).toContain('message timeouts 2 (1.0/s)');
    expect(text).toMatch(/^rate-limit-by-key\s+RateLimitExceeded\s+25\s+10\.0$/m);
  });

  // Issue #34, item 6: without engine.metricsPort every API read 0 req/s, as if no traffic came.
  it('says what to configure when no engine metrics can be read, instead of zeros', () => {
    const counters = { 'http.ingress_http.downstream_rq_total': 10 };
    const view = loadView(snapshot(0, '', counters, 0), snapshot(1000, '', { ...counters }, 0), ['courses']);
    expect(view.noEngineMetrics).toBe(true);
    const text = renderView(view, 'stats');
    expect(text).not.toMatch(/^courses\s/m);
    expect(text).toContain(
      'the configuration sets no engine.metricsPort. Add `engine: { metricsPort: 9464 }`',
    );
  });
});
