import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/**
 * An OpenTelemetry collector's OTLP/HTTP traces receiver, as far as a test needs one: it accepts `POST /v1/traces`
 * in protobuf (what Envoy sends) or JSON (what the JS exporter sends) and keeps every span.
 */

export interface ReceivedSpan {
  /** `service.name` of the resource that sent it. */
  readonly service: string;
  readonly name: string;
  /** Lower-case hex, as `traceparent` writes them; `parentSpanId` is '' for a root span. */
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
}

export interface OtlpReceiver {
  /** The base URL to configure as `telemetry.otlp.endpoint`. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  close(): Promise<void>;
}

// The part of opentelemetry/proto/collector/trace/v1 and its imports a span's identity needs, with their field numbers.
const otlpTraceProto = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
message ScopeSpans { repeated Span spans = 2; }
message Span { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; }
`;
const exportRequest = protobuf.parse(otlpTraceProto).root.lookupType('otlp.ExportTraceServiceRequest');

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value?: { stringValue?: string } }[] };
    scopeSpans?: {
      spans?: { traceId?: string; spanId?: string; parentSpanId?: string; name?: string }[];
    }[];
  }[];
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const json = String(request.headers['content-type']).startsWith('application/json');
      const decoded = (
        json
          ? JSON.parse(body.toString('utf8'))
          : exportRequest.toObject(exportRequest.decode(body), { bytes: String, defaults: true })
      ) as OtlpExport;
      // protobufjs's toObject writes bytes as base64, the JSON encoding writes them as hex.
      const hex = (id: string | undefined) =>
        json ? (id ?? '') : Buffer.from(id ?? '', 'base64').toString('hex');
      for (const resource of decoded.resourceSpans ?? []) {
        const service =
          resource.resource?.attributes?.find((attribute) => attribute.key === 'service.name')?.value
            ?.stringValue ?? '';
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              service,
              name: span.name ?? '',
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: hex(span.parentSpanId),
            });
      }
      response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      response.end(json ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
