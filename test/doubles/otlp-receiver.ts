import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/**
 * An OpenTelemetry collector's OTLP/HTTP receiver, as far as a test needs one: it accepts `POST /v1/traces` in
 * protobuf (what Envoy sends) or JSON (what the JS exporter sends) and keeps every span, and `POST /v1/metrics` in
 * JSON (the JS exporter) and keeps every data point, and `POST /v1/logs` in JSON (the JS logs exporter) and keeps
 * every log record.
 */

export interface ReceivedSpan {
  /** `service.name` of the resource that sent it. */
  readonly service: string;
  readonly name: string;
  /** Lower-case hex, as `traceparent` writes them; `parentSpanId` is '' for a root span. */
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  /** Nanoseconds since the epoch, in decimal (a bigint would not go through JSON.stringify). */
  readonly startTime: string;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
}

/** One data point of one export, flattened: a histogram's point has `count`, `sum`, `bounds` and `bucketCounts`. */
export interface ReceivedPoint {
  readonly service: string;
  /** `service.instance.id` of the resource: which process of that service. */
  readonly instance: string;
  readonly name: string;
  readonly unit: string;
  readonly kind: 'sum' | 'gauge' | 'histogram';
  readonly attributes: Readonly<Record<string, string>>;
  readonly value?: number;
  readonly count?: number;
  readonly sum?: number;
  readonly bounds?: readonly number[];
  readonly bucketCounts?: readonly number[];
}

export interface ReceivedLogRecord {
  /** `service.name` of the resource that sent it. */
  readonly service: string;
  readonly body: string;
  readonly severityText: string;
  /** String attributes, by key. */
  readonly attributes: Readonly<Record<string, string>>;
  /** Lower-case hex; '' when the record belongs to no trace. */
  readonly traceId: string;
  readonly timeUnixNano: string;
}

export interface OtlpReceiver {
  /** The base URL to configure as `telemetry.otlp.endpoint`. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  /** Every metric data point received, in arrival order (each export repeats the cumulative series). */
  readonly points: ReceivedPoint[];
  readonly logs: ReceivedLogRecord[];
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
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5;
  fixed64 start_time_unix_nano = 7; Status status = 15;
}
message Status { string message = 2; int32 code = 3; }
`;
const exportRequest = protobuf.parse(otlpTraceProto).root.lookupType('otlp.ExportTraceServiceRequest');

type OtlpAttributes = { key: string; value?: { stringValue?: string } }[];

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttributes };
    scopeSpans?: {
      spans?: {
        traceId?: string;
        spanId?: string;
        parentSpanId?: string;
        name?: string;
        startTimeUnixNano?: string | number;
        status?: { code?: number };
      }[];
    }[];
  }[];
}

interface OtlpNumberPoint {
  attributes?: OtlpAttributes;
  asDouble?: number | string;
  asInt?: number | string;
}

interface OtlpHistogramPoint {
  attributes?: OtlpAttributes;
  count?: number | string;
  sum?: number;
  explicitBounds?: number[];
  bucketCounts?: (number | string)[];
}

interface OtlpMetricsExport {
  resourceMetrics?: {
    resource?: { attributes?: OtlpAttributes };
    scopeMetrics?: {
      metrics?: {
        name: string;
        unit?: string;
        sum?: { dataPoints?: OtlpNumberPoint[] };
        gauge?: { dataPoints?: OtlpNumberPoint[] };
        histogram?: { dataPoints?: OtlpHistogramPoint[] };
      }[];
    }[];
  }[];
}

function attribute(attributes: OtlpAttributes | undefined, key: string): string {
  return attributes?.find((entry) => entry.key === key)?.value?.stringValue ?? '';
}

function attributeRecord(attributes: OtlpAttributes | undefined): Record<string, string> {
  return Object.fromEntries((attributes ?? []).map((entry) => [entry.key, entry.value?.stringValue ?? '']));
}

/** The points of one JSON metrics export, flattened. */
function metricPoints(decoded: OtlpMetricsExport): ReceivedPoint[] {
  const points: ReceivedPoint[] = [];
  for (const resource of decoded.resourceMetrics ?? []) {
    const service = attribute(resource.resource?.attributes, 'service.name');
    const instance = attribute(resource.resource?.attributes, 'service.instance.id');
    for (const scope of resource.scopeMetrics ?? [])
      for (const metric of scope.metrics ?? []) {
        const common = { service, instance, name: metric.name, unit: metric.unit ?? '' };
        for (const kind of ['sum', 'gauge'] as const)
          for (const point of metric[kind]?.dataPoints ?? [])
            points.push({
              ...common,
              kind,
              attributes: attributeRecord(point.attributes),
              value: Number(point.asDouble ?? point.asInt),
            });
        for (const point of metric.histogram?.dataPoints ?? [])
          points.push({
            ...common,
            kind: 'histogram',
            attributes: attributeRecord(point.attributes),
            count: Number(point.count),
            sum: Number(point.sum),
            bounds: point.explicitBounds ?? [],
            bucketCounts: (point.bucketCounts ?? []).map(Number),
          });
      }
  }
  return points;
}

interface OtlpLogsExport {
  resourceLogs?: {
    resource?: { attributes?: OtlpAttributes };
    scopeLogs?: {
      logRecords?: {
        body?: { stringValue?: string };
        severityText?: string;
        attributes?: OtlpAttributes;
        traceId?: string;
        timeUnixNano?: string | number;
      }[];
    }[];
  }[];
}

/** The records of a JSON logs export. */
function logRecordsOf(decoded: OtlpLogsExport): ReceivedLogRecord[] {
  return (decoded.resourceLogs ?? []).flatMap((resource) => {
    const service = attribute(resource.resource?.attributes, 'service.name');
    return (resource.scopeLogs ?? []).flatMap((scope) =>
      (scope.logRecords ?? []).map((record) => ({
        service,
        body: record.body?.stringValue ?? '',
        severityText: record.severityText ?? '',
        attributes: attributeRecord(record.attributes),
        traceId: record.traceId ?? '',
        timeUnixNano: String(record.timeUnixNano ?? ''),
      })),
    );
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const logs: ReceivedLogRecord[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const json = String(request.headers['content-type']).startsWith('application/json');
      if (request.url === '/v1/logs' && json) {
        logs.push(...logRecordsOf(JSON.parse(body.toString('utf8')) as OtlpLogsExport));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      if (request.url === '/v1/metrics') {
        if (!json) {
          response.writeHead(415, { 'content-type': 'text/plain' }).end('this receiver reads JSON metrics\n');
          return;
        }
        points.push(...metricPoints(JSON.parse(body.toString('utf8')) as OtlpMetricsExport));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const decoded = (
        json
          ? JSON.parse(body.toString('utf8'))
          : exportRequest.toObject(exportRequest.decode(body), {
              bytes: String,
              longs: String,
              defaults: true,
            })
      ) as OtlpExport;
      // protobufjs's toObject writes bytes as base64, the JSON encoding writes them as hex.
      const hex = (id: string | undefined) =>
        json ? (id ?? '') : Buffer.from(id ?? '', 'base64').toString('hex');
      for (const resource of decoded.resourceSpans ?? []) {
        const service = attribute(resource.resource?.attributes, 'service.name');
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              service,
              name: span.name ?? '',
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: hex(span.parentSpanId),
              startTime: String(span.startTimeUnixNano ?? 0),
              statusCode: span.status?.code ?? 0,
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
    points,
    logs,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
