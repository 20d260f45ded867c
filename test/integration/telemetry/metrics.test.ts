import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/config/plan.js';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type OtlpReceiver, type ReceivedPoint, startOtlpReceiver } from '../../doubles/otlp-receiver.js';
import { startUp, type UpRun } from '../../processes/up.js';
import { until } from '../../processes/wait.js';

/**
 * `telemetry.otlp` pushes the engine's and the service's metrics to the collector: `portcullis up` on a gateway file
 * with a short interval, a request through Envoy and the engine (an emit-metric on the way) and one the service
 * answers, and the OTLP/HTTP receiver the test serves gets the same series Prometheus' `/metrics` shows.
 */
describe('telemetry.otlp metrics', () => {
  let collector: OtlpReceiver;
  let backend: EchoBackend;
  let directory: string;
  let run: UpRun;
  let gatewayUrl: string;

  beforeAll(async () => {
    collector = await startOtlpReceiver();
    backend = await startEchoBackend();
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-otlp-metrics-'));
    const [gatewayPort, adminPort] = [await freePort(), await freePort()];
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    await writeFile(
      path.join(directory, 'courses.xml'),
      [
        '<policies><inbound><base />',
        '<emit-metric name="course-reads" namespace="school" value="2"><dimension name="API ID" /></emit-metric>',
        '</inbound><backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error></policies>',
      ].join(''),
    );
    const file = path.join(directory, 'gateway.yaml');
    await writeFile(
      file,
      [
        `gateway: { http: { host: 127.0.0.1, port: ${gatewayPort} } }`,
        `admin: { port: ${adminPort} }`,
        'envoy: { concurrency: 1 }',
        'telemetry:',
        `  otlp: { endpoint: "${collector.endpoint}", metricsIntervalSeconds: 1, samplingRatio: 0 }`,
        'apis:',
        `  - { id: courses, urlSuffix: courses, serviceUrl: "${backend.url}", operations: [{ id: list-courses, method: GET, urlTemplate: /api/Course }], policy: courses.xml }`,
        'products: [{ id: courses, apis: [courses] }]',
        'auth:',
        `  issuer: ${gatewayUrl}`,
        `  baseUrl: ${gatewayUrl}`,
        '  cookieSecure: false',
      ].join('\n'),
    );
    run = startUp(file);
    await run.waitFor('Press Ctrl-C to stop.', 50_000);
  }, 60_000);

  afterAll(async () => {
    await run?.stop(15_000);
    await backend?.close();
    await collector?.close();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  /** The newest point of a series (each export repeats the cumulative ones). */
  const latest = (test: (point: ReceivedPoint) => boolean) => collector.points.findLast(test);
  const has = (attributes: Record<string, string>) => (point: ReceivedPoint) =>
    Object.entries(attributes).every(([name, value]) => point.attributes[name] === value);

  it('pushes the engine’s request counter, duration histogram and emit-metric series, and the service’s requests', async () => {
    for (let request = 0; request < 2; request++)
      expect((await fetch(`${gatewayUrl}/courses/api/Course`)).status).toBe(200);
    expect((await fetch(`${gatewayUrl}/.well-known/oauth-authorization-server`)).status).toBe(200);

    const engineRequests = () =>
      latest(
        (point) =>
          point.service === 'portcullis-engine' &&
          point.name === 'portcullis_engine_requests_total' &&
          has({ api: 'courses', operation: 'list-courses', outcome: 'forwarded' })(point),
      );
    const serviceRequests = () =>
      latest(
        (point) =>
          point.service === 'portcullis-service' &&
          point.name === 'portcullis_service_requests_total' &&
          has({ route: 'metadata /.well-known/oauth-authorization-server', method: 'GET', status: '200' })(
            point,
          ),
      );
    await until(
      () => engineRequests()?.value === 2 && serviceRequests()?.value === 1,
      'the engine’s and the service’s request counts at the collector',
      {
        timeoutMs: 20_000,
        detail: () =>
          JSON.stringify(
            collector.points.filter((point) => /requests_total$/.test(point.name)).slice(-10),
            null,
            1,
          ),
      },
    );
    // The engine never sees the backend's answer (no outbound policy asks for it): its status is "", as on /metrics.
    expect(engineRequests()).toMatchObject({ kind: 'sum', attributes: { status: '', reason: '' } });
    expect(engineRequests()!.instance).toMatch(/^[0-9a-f-]{36}$/);

    const duration = latest(
      (point) =>
        point.service === 'portcullis-engine' &&
        point.name === 'portcullis_engine_request_duration_seconds' &&
        has({ api: 'courses', operation: 'list-courses' })(point),
    );
    expect(duration).toMatchObject({ kind: 'histogram', unit: 's', count: 2 });
    // prom-client's buckets, as the engine declares them, each bucket counting its own observations.
    expect(duration!.bounds).toEqual([
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]);
    expect(duration!.bucketCounts).toHaveLength(14);
    expect(duration!.bucketCounts!.reduce((total, count) => total + count, 0)).toBe(2);

    // emit-metric's series: its namespace, name and dimensions are the labels, as on /metrics.
    expect(
      latest(
        (point) =>
          point.service === 'portcullis-engine' &&
          point.name === 'portcullis_custom_metric_total' &&
          has({ namespace: 'school', name: 'course-reads', api_id: 'courses' })(point),
      ),
    ).toMatchObject({ kind: 'sum', value: 4 });
    // The process's own metrics come along, from each process.
    for (const service of ['portcullis-engine', 'portcullis-service'])
      expect(
        latest((point) => point.service === service && point.name === 'process_cpu_user_seconds_total'),
      ).toMatchObject({ kind: 'sum', unit: 's' });
  }, 60_000);
});
