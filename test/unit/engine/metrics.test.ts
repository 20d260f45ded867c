import { describe, expect, it } from 'vitest';
import { ElementCounters } from '../../../src/engine/element-counters.js';
import { EngineMetrics } from '../../../src/engine/metrics.js';

describe('engine metrics', () => {
  it('renders requests, element outcomes and open streams in the Prometheus text format', () => {
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
    const text = metrics.render();
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
  });
});
