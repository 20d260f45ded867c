import { type Context, isSpanContextValid, ROOT_CONTEXT, type SpanContext, trace } from '@opentelemetry/api';
import type { ExportResultCode } from '@opentelemetry/core';
import type { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import type { LoggerProvider, LogRecordProcessor, ReadableLogRecord } from '@opentelemetry/sdk-logs';
import {
  type BatchOutcome,
  EventStream,
  type EventStreamOptions,
  type RetainedEvent,
  type StreamEvent,
} from './event-stream.js';
import { lazyPackage } from './lazy-package.js';
import type { OtlpLogsTarget } from './options.js';

// The logs SDK and its OTLP exporter, loaded when an OTLP logger's stream is made (lazy-package.ts).
const apiLogs = lazyPackage<typeof import('@opentelemetry/api-logs')>('@opentelemetry/api-logs');
const core = lazyPackage<typeof import('@opentelemetry/core')>('@opentelemetry/core');
const exporter = lazyPackage<typeof import('@opentelemetry/exporter-logs-otlp-http')>(
  '@opentelemetry/exporter-logs-otlp-http',
);
const resources = lazyPackage<typeof import('@opentelemetry/resources')>('@opentelemetry/resources');
const logsSdk = lazyPackage<typeof import('@opentelemetry/sdk-logs')>('@opentelemetry/sdk-logs');

/** An event as the OTLP stream queues it: when it was sent, and the span of the request that sent it. */
interface OtlpEvent extends StreamEvent {
  readonly time: number;
  readonly span?: SpanContext;
}

/**
 * log-to-eventhub to OpenTelemetry collectors: each event an OTLP log record (OpenTelemetry's logs SDK makes the
 * records, its OTLP/HTTP exporter sends them). The bounded buffer, ordered batches, retries and counted drops are
 * EventStream's, as for the other sinks; a batch is one export request. One stream per logger. Keyed by logger id.
 */
export function openOtlpStreams(
  targets: ReadonlyMap<string, OtlpLogsTarget>,
  options: Omit<EventStreamOptions<OtlpLogsTarget>, 'targets'>,
): Map<string, OtlpEventStream> {
  return new Map(
    [...targets].map(([loggerId, target]) => [
      loggerId,
      new OtlpEventStream({ ...options, targets: new Map([[loggerId, target]]) }),
    ]),
  );
}

export class OtlpEventStream extends EventStream<OtlpLogsTarget> {
  readonly #exporter: OTLPLogExporter;
  readonly #provider: LoggerProvider;
  /** The records the logs SDK made for the batch being written. */
  readonly #made: ReadableLogRecord[] = [];

  constructor(options: EventStreamOptions<OtlpLogsTarget>) {
    super(options);
    const [target] = options.targets.values();
    if (target === undefined) throw new TypeError('an OTLP event stream needs its logger');
    this.#exporter = new (exporter().OTLPLogExporter)({
      url: `${target.endpoint.replace(/\/$/, '')}/v1/logs`,
      headers: resolvedHeaders(target, [...options.targets.keys()][0]!),
      timeoutMillis: target.timeoutMs,
    });
    const made = this.#made;
    const collect: LogRecordProcessor = {
      onEmit: (record) => void made.push(record),
      forceFlush: async () => {},
      shutdown: async () => {},
    };
    this.#provider = new (logsSdk().LoggerProvider)({
      resource: resources().resourceFromAttributes({ 'service.name': target.serviceName }),
      processors: [collect],
    });
  }

  /** Queues the event with its time and the span of the request sending it (so the record joins its trace). */
  override send(event: StreamEvent): ReturnType<EventStream['send']> {
    const span = trace.getActiveSpan()?.spanContext();
    const timed: OtlpEvent = {
      ...event,
      time: Date.now(),
      ...(span !== undefined && isSpanContextValid(span) ? { span } : {}),
    };
    return super.send(timed);
  }

  protected async writeBatch(batch: readonly StreamEvent[]): Promise<BatchOutcome> {
    const logger = this.#provider.getLogger('portcullis.log-to-eventhub');
    this.#made.length = 0;
    for (const event of batch as readonly OtlpEvent[])
      logger.emit({
        timestamp: event.time,
        severityNumber: apiLogs().SeverityNumber.INFO,
        severityText: 'INFO',
        body: event.message,
        attributes: {
          'portcullis.logger_id': event.loggerId,
          ...(event.partitionId === undefined ? {} : { 'portcullis.partition_id': event.partitionId }),
          ...(event.partitionKey === undefined ? {} : { 'portcullis.partition_key': event.partitionKey }),
        },
        ...(event.span === undefined ? {} : { context: spanContextOf(event.span) }),
      });
    const records = this.#made.splice(0);
    const result = await new Promise<{ code: ExportResultCode; error?: Error }>((resolve) =>
      this.#exporter.export(records, resolve),
    );
    if (result.code !== core().ExportResultCode.SUCCESS) {
      const target = this.target(batch[0]!.loggerId);
      throw new Error(`otlp ${target.endpoint}: ${result.error?.message ?? 'export failed'}`);
    }
    return { written: batch.length, refused: [] };
  }

  async read(loggerId: string): Promise<RetainedEvent[]> {
    const { endpoint } = this.target(loggerId);
    throw new Error(`logger "${loggerId}" sends to the OpenTelemetry collector ${endpoint}: read it there`);
  }

  override async close(): Promise<void> {
    await super.close();
    await this.#exporter.shutdown();
    await this.#provider.shutdown();
  }
}

function spanContextOf(span: SpanContext): Context {
  return trace.setSpanContext(ROOT_CONTEXT, span);
}

/** The headers with their environment variables read; an unset variable is an error naming it. */
function resolvedHeaders(target: OtlpLogsTarget, loggerId: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.headers)) {
    if (typeof value === 'string') headers[name] = value;
    else {
      const fromEnvironment = process.env[value.env];
      if (fromEnvironment === undefined)
        throw new Error(
          `state.loggers.${loggerId}.otlp.headers.${name}: environment variable ${value.env} is not set`,
        );
      headers[name] = fromEnvironment;
    }
  }
  return headers;
}
