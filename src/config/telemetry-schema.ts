import { z } from 'zod';
import type { MetricsExport } from '../metrics-export.js';
import { otlpEndpointSchema, otlpHeadersSchema } from '../state/options.js';
import type { TraceExport } from '../tracing.js';

/**
 * The `telemetry` section: where Envoy, the engine and the service send their OpenTelemetry traces, and the engine
 * and the service their metrics.
 *
 * ```yaml
 * telemetry:
 *   otlp:
 *     endpoint: http://collector:4318     # the collector's OTLP/HTTP receiver; traces go to <endpoint>/v1/traces
 *     headers: { x-api-key: { env: COLLECTOR_KEY } }
 *     serviceNamePrefix: portcullis       # services portcullis-envoy, portcullis-engine, portcullis-service
 *     samplingRatio: 0.1                  # Envoy decides for a new trace; the engine and service follow its choice
 *     metricsIntervalSeconds: 60          # the engine's and the service's metrics go to <endpoint>/v1/metrics
 * ```
 *
 * Absent: no tracer is configured anywhere and a request pays nothing for tracing; metrics are only on `/metrics`.
 */

export const otlpConfigSchema = z
  .object({
    endpoint: otlpEndpointSchema(),
    headers: otlpHeadersSchema,
    serviceNamePrefix: z
      .string()
      .regex(/^[A-Za-z0-9._-]+$/, { message: 'must be letters, digits, ".", "-" or "_"' })
      .default('portcullis'),
    /** The share of new traces recorded, from 0 to 1; a request arriving with a sampled `traceparent` is recorded. */
    samplingRatio: z.number().min(0).max(1).default(1),
    /**
     * How often the engine and the service push their metrics to `<endpoint>/v1/metrics` (the same series their
     * Prometheus `/metrics` serves). The OpenTelemetry SDK's own default is a minute.
     */
    metricsIntervalSeconds: z.number().min(1).max(3600).default(60),
  })
  .strict();

export const telemetryConfigSchema = z.object({ otlp: otlpConfigSchema.optional() }).strict();

export type OtlpConfig = z.infer<typeof otlpConfigSchema>;
export type TelemetryConfig = z.infer<typeof telemetryConfigSchema>;

/** The process names the spans of each part of the gateway carry (`service.name`). */
export type TracedProcess = 'envoy' | 'engine' | 'service';

export function tracedServiceName(otlp: OtlpConfig, process: TracedProcess): string {
  return `${otlp.serviceNamePrefix}-${process}`;
}

/** The headers with their environment variables read; an unset variable is an error naming it. */
export function otlpHeaders(
  otlp: OtlpConfig,
  environment: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(otlp.headers)) {
    if (typeof value === 'string') headers[name] = value;
    else {
      const fromEnvironment = environment[value.env];
      if (fromEnvironment === undefined)
        throw new Error(`telemetry.otlp.headers.${name}: environment variable ${value.env} is not set`);
      headers[name] = fromEnvironment;
    }
  }
  return headers;
}

/** Where OTLP/HTTP traces go, per the specification's signal path. */
export function otlpTracesUrl(otlp: OtlpConfig): string {
  return `${otlp.endpoint.replace(/\/$/, '')}/v1/traces`;
}

/** What a process's tracer provider needs (src/tracing.ts) from `telemetry.otlp`. */
export function traceExport(otlp: OtlpConfig, process: TracedProcess): TraceExport {
  return {
    tracesUrl: otlpTracesUrl(otlp),
    headers: otlpHeaders(otlp),
    serviceName: tracedServiceName(otlp, process),
    samplingRatio: otlp.samplingRatio,
  };
}

/** Where OTLP/HTTP metrics go. */
export function otlpMetricsUrl(otlp: OtlpConfig): string {
  return `${otlp.endpoint.replace(/\/$/, '')}/v1/metrics`;
}

/** What a process's metrics export needs (src/metrics-export.ts) from `telemetry.otlp`. */
export function metricsExport(
  otlp: OtlpConfig,
  process: Exclude<TracedProcess, 'envoy'>,
  environment: NodeJS.ProcessEnv = globalThis.process.env,
): MetricsExport {
  return {
    metricsUrl: otlpMetricsUrl(otlp),
    headers: otlpHeaders(otlp, environment),
    serviceName: tracedServiceName(otlp, process),
    intervalMs: otlp.metricsIntervalSeconds * 1000,
  };
}
