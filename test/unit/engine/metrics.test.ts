import { describe, expect, it } from 'vitest';
import { ElementCounters } from '../../../src/engine/element-counters.js';
import { dimensionLabel, EngineMetrics, MAX_CUSTOM_SERIES } from '../../../src/engine/metrics.js';

describe('engine metrics', () => {
  it('renders requests, element outcomes and open streams in the Prometheus text format', async () => {
    const counters = new ElementCounters();
    counters.count('ip-filter', 'refused', 'CallerIpNotAllowed');
    counters.count('ip-filter', 'refused', 'CallerIpNotAllowed');
    counters.count('set-header', 'allowed');
    const metrics = new EngineMetrics(counters, () => 3);
    metrics.recordExchange({
      requestId: 'a',
      method: 'GET',
      path: '/x',
      api: 'courses',
      operation: 'list',
      outcome: 'forwarded',
      status: 200,
      durationMs: 3,
    });
    metrics.recordExchange({
      requestId: 'b',
      method: 'GET',
      path: '/x',
      api: 'courses',
      operation: 'list',
      outcome: 'forwarded',
      status: 200,
    });
    metrics.recordExchange({
      requestId: 'c',
      method: 'GET',
      path: '/y',
      api: 'courses',
      outcome: 'responded',
      status: 404,
      lastError: { source: 'configuration', reason: 'OperationNotFound', message: 'say "hi"' },
    });
    const text = await metrics.render();
    expect(text).toContain(
      'portcullis_engine_requests_total{api="courses",operation="list",outcome="forwarded",status="200",reason=""} 2\n',
    );
    expect(text).toContain(
      'portcullis_engine_requests_total{api="courses",operation="",outcome="responded",status="404",reason="OperationNotFound"} 1\n',
    );
    expect(text).toContain(
      'portcullis_policy_element_total{element="ip-filter",outcome="refused",reason="CallerIpNotAllowed"} 2\n',
    );
    expect(text).toContain(
      'portcullis_policy_element_total{element="set-header",outcome="allowed",reason=""} 1\n',
    );
    expect(text).toContain('portcullis_engine_streams_active 3\n');
    expect(text).toContain('# TYPE portcullis_engine_requests_total counter\n');
    // Only the exchange that told its duration is observed: 3 ms falls in the 5 ms bucket.
    expect(text).toContain(
      'portcullis_engine_request_duration_seconds_bucket{le="0.0025",api="courses",operation="list"} 0\n',
    );
    expect(text).toContain(
      'portcullis_engine_request_duration_seconds_bucket{le="0.005",api="courses",operation="list"} 1\n',
    );
    expect(text).toContain(
      'portcullis_engine_request_duration_seconds_count{api="courses",operation="list"} 1\n',
    );
  });

  it('sums custom metrics per namespace, name and dimensions, with dimension names as label names, bounded', async () => {
    const metrics = new EngineMetrics(new ElementCounters());
    const emit = (value: number, api: string) =>
      metrics.emit({
        name: 'Total Tokens',
        namespace: 'llm',
        value,
        dimensions: [
          ['API ID', api],
          ['name', 'x'],
        ],
      });
    emit(30, 'chat');
    emit(12, 'chat');
    emit(5, 'embed');
    const text = await metrics.render();
    expect(text).toContain(
      'portcullis_custom_metric_total{namespace="llm",name="Total Tokens",api_id="chat",dimension_name="x"} 42',
    );
    expect(text).toContain(
      'portcullis_custom_metric_emissions_total{namespace="llm",name="Total Tokens",api_id="chat",dimension_name="x"} 2',
    );
    expect(text).toContain('api_id="embed",dimension_name="x"} 5');
    expect([dimensionLabel('Client IP'), dimensionLabel('9 lives'), dimensionLabel('__x')]).toEqual([
      'client_ip',
      'dimension_9_lives',
      'x',
    ]);
    for (let i = 0; i < MAX_CUSTOM_SERIES + 5; i++) emit(1, `api-${i}`);
    expect(await metrics.render()).toContain('portcullis_custom_metric_dropped_total 7');
  });
});
