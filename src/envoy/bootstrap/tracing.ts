/**
 * Envoy's own OpenTelemetry tracer (`envoy.tracers.opentelemetry`), for the gateway listeners. Envoy starts the trace
 * of a request (or continues the client's W3C `traceparent`), passes it to the engine in the ext_proc stream's
 * headers and to the backend in the forwarded request, and exports its spans over OTLP/HTTP to the collector.
 */

import type { Cluster, ConnectionManagerTracing } from '../config-types.js';

/** Where the spans go and how many new traces are kept; absent from the plan, Envoy traces nothing. */
export interface TracingPlan {
  /** The collector's OTLP/HTTP traces URL, e.g. `http://collector:4318/v1/traces`. */
  readonly tracesUrl: string;
  /** Headers on every export (a collector's API key). */
  readonly headers: Readonly<Record<string, string>>;
  /** `service.name` of Envoy's spans. */
  readonly serviceName: string;
  /** The share of new traces recorded, 0 to 1; a client's sampled `traceparent` is followed. */
  readonly samplingRatio: number;
}

export const collectorClusterName = 'portcullis_otlp_collector';

/** The HTTP connection manager's `tracing`. */
export function connectionManagerTracing(tracing: TracingPlan): ConnectionManagerTracing {
  const url = new URL(tracing.tracesUrl);
  return {
    // Envoy's percentages: random_sampling decides for a request without a trace; a client's sampled flag is kept
    // (client_sampling 100), and no trace is forced by x-client-trace-id beyond the ratio.
    random_sampling: { value: tracing.samplingRatio * 100 },
    client_sampling: { value: 100 },
    overall_sampling: { value: 100 },
    // The router's own span for the call to the backend, so the backend's parent is the forwarded request itself.
    spawn_upstream_span: true,
    provider: {
      name: 'envoy.tracers.opentelemetry',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig',
        service_name: tracing.serviceName,
        http_service: {
          http_uri: { uri: url.href, cluster: collectorClusterName, timeout: '5s' },
          request_headers_to_add: Object.entries(tracing.headers).map(([key, value]) => ({
            header: { key, value },
          })),
        },
      },
    },
  };
}

/** The collector's cluster, built like a backend's so an https:// collector gets TLS with the system CAs. */
export function collectorCluster(
  tracing: TracingPlan,
  urlCluster: (name: string, url: string) => Cluster,
): Cluster {
  const url = new URL(tracing.tracesUrl);
  return urlCluster(collectorClusterName, url.origin);
}
