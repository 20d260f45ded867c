import type { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { afterAll, describe, expect, it } from 'vitest';
import { createServiceApp } from '../../../src/service/app.js';

describe('the service with a tracer (telemetry.otlp)', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  afterAll(() => provider.shutdown());

  it('serves each request in a span under the caller’s traceparent, active for what the request calls', async () => {
    let outgoing: Record<string, string> = {};
    const app = createServiceApp({
      tracer: provider.getTracer('test'),
      middleware: [
        async (ctx) => {
          // What a tool call's request to the gateway gets (gateway-caller.ts).
          outgoing = {};
          propagation.inject(context.active(), outgoing);
          ctx.body = { ok: true };
        },
      ],
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/mcp/`, {
        headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      });
      expect(response.status).toBe(200);
      const [span] = exporter.getFinishedSpans();
      expect(span?.spanContext().traceId).toBe(traceId);
      expect(span?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
      expect(span?.attributes['http.response.status_code']).toBe(200);
      expect(outgoing.traceparent).toBe(`00-${traceId}-${span?.spanContext().spanId}-01`);
      expect(trace.getActiveSpan()).toBeUndefined();
    } finally {
      server.close();
    }
  });
});
