/**
 * Starts a process's tracer provider (tracing.ts says what the process traces and how). Its own module, imported
 * only when `telemetry.otlp` is configured: the OpenTelemetry SDK and exporter are some 200 modules that a process
 * without a collector would otherwise load at every start.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import { type ProcessTracing, serviceInstanceId, type TraceExport } from './tracing.js';

/**
 * Starts the process's tracer provider and registers it, with the async-context manager (so a span started in a
 * policy service is a child of the request's) and the W3C trace-context propagator.
 */
export function startTracing(settings: TraceExport): ProcessTracing {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.instance.id': serviceInstanceId,
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRatio) }),
    spanProcessors: [
      new BatchSpanProcessor(
        new OTLPTraceExporter({ url: settings.tracesUrl, headers: { ...settings.headers } }),
        {
          // A request's spans reach the collector within a second; a full queue drops spans, never waits.
          scheduledDelayMillis: 500,
          maxQueueSize: 4096,
        },
      ),
    ],
  });
  provider.register();
  return {
    tracer: provider.getTracer('portcullis'),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
