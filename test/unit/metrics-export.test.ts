import { DataPointType, type HistogramMetricData, type SumMetricData } from '@opentelemetry/sdk-metrics';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { PrometheusRegistryProducer } from '../../src/metrics-export.js';

describe('PrometheusRegistryProducer', () => {
  it('reads counters, gauges and histograms of prom-client registries as OTLP data, names and labels kept', async () => {
    const registry = new Registry();
    new Counter({ name: 'calls_total', help: 'Calls.', labelNames: ['api'], registers: [registry] }).inc(
      { api: 'courses' },
      3,
    );
    new Gauge({ name: 'open_streams', help: 'Open.', registers: [registry] }).set(2);
    const durations = new Histogram({
      name: 'call_duration_seconds',
      help: 'Durations.',
      labelNames: ['api'],
      buckets: [0.1, 1],
      registers: [registry],
    });
    for (const seconds of [0.05, 0.5, 0.7, 5]) durations.observe({ api: 'courses' }, seconds);

    const { resourceMetrics, errors } = await new PrometheusRegistryProducer(() => [registry]).collect();
    expect(errors).toEqual([]);
    const metrics = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    const byName = (name: string) => metrics.find((metric) => metric.descriptor.name === name);

    const calls = byName('calls_total') as SumMetricData;
    expect(calls).toMatchObject({ dataPointType: DataPointType.SUM, isMonotonic: true });
    expect(calls.descriptor.description).toBe('Calls.');
    expect(calls.dataPoints.map((point) => [point.attributes, point.value])).toEqual([
      [{ api: 'courses' }, 3],
    ]);
    expect(byName('open_streams')).toMatchObject({
      dataPointType: DataPointType.GAUGE,
      dataPoints: [{ value: 2, attributes: {} }],
    });
    const histogram = byName('call_duration_seconds') as HistogramMetricData;
    expect(histogram.descriptor.unit).toBe('s');
    expect(histogram.dataPoints).toHaveLength(1);
    // Cumulative `le` buckets become each bucket's own count; the last holds what is above every bound.
    expect(histogram.dataPoints[0]!).toMatchObject({
      attributes: { api: 'courses' },
      value: { buckets: { boundaries: [0.1, 1], counts: [1, 2, 1] }, count: 4, sum: 6.25 },
    });
  });

  it('keeps a registry’s start time, and gives a replaced registry (a reload’s new engine state) its own', async () => {
    const first = new Registry();
    new Counter({ name: 'a_total', help: 'A.', registers: [first] }).inc();
    let current = first;
    const producer = new PrometheusRegistryProducer(() => [current]);
    const startOf = async () => {
      const { resourceMetrics } = await producer.collect();
      return resourceMetrics.scopeMetrics[0]!.metrics[0]!.dataPoints[0]!.startTime;
    };
    const started = await startOf();
    expect(await startOf()).toEqual(started);
    await new Promise((resolve) => setImmediate(resolve));
    current = new Registry();
    new Counter({ name: 'a_total', help: 'A.', registers: [current] }).inc();
    expect(await startOf()).not.toEqual(started);
  });
});
