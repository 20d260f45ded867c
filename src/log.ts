/**
 * The one logger of every Portcullis process (the engine, the service, `up` and the management API inside it):
 * pino, one JSON line per entry, in one shape —
 * `{"level":"info","time":"2026-11-25T12:00:01.234Z","requestId":"…","traceId":"…",…fields,"message":"request"}` —
 * with credentials redacted by the logger itself (redact.ts on every field and on the message), written a burst at a
 * time (pino's sonic-boom on stderr, flushed on exit). Modules take the `Logger` interface, never pino.
 *
 * A line written while a request is handled carries that request's ids — the request id (Envoy's `x-request-id`)
 * and the trace id (the active span's, else the request's `traceparent`'s): the service's Koa requests run inside
 * `withRequestLogFields`, so every line logged within gets them, by any module however deep; the engine's exchange
 * hands its pipelines a `requestLogger` (see withRequestLogFields for why).
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { type DestinationStream, type LoggerOptions, type Logger as PinoLogger, pino } from 'pino';
import { redactFields, redactText } from './redact.js';

/** The one logger shape every module takes: a message and structured fields. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const logLevels = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof logLevels)[number];

/** The fields that describe a failure in a log line: its stack (or message), credentials redacted by the logger. */
export function errorFields(error: unknown): { error: string } {
  return { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
}

/**
 * The ids of the request being handled, on every line logged while it is: filled in as they become known (the
 * engine decides the request id in its first phase), hence mutable.
 */
export interface RequestLogFields {
  requestId?: string;
  traceId?: string;
}

const requestFields = new AsyncLocalStorage<RequestLogFields>();

/**
 * Runs `work` with `fields` on every line logged within it, and within whatever it awaits or schedules. Node 20's
 * AsyncLocalStorage costs every promise of the process something once it is used (the engine measured +40% CPU
 * per request): the Koa service uses it; the engine's exchange, where every microsecond shows, gives its request's
 * pipelines a `requestLogger` instead.
 */
export function withRequestLogFields<T>(fields: RequestLogFields, work: () => T): T {
  return requestFields.run(fields, work);
}

/**
 * `logger` with the request's ids (read when a line is written: they may be known later) on every line, and its
 * message and every string of its fields passed through `redact` (the request's secret values: what the logger
 * itself removes are shapes, it cannot know a request's values).
 */
export function requestLogger(
  logger: Logger,
  fields: RequestLogFields,
  redact?: (text: string) => string,
): Logger {
  return new RequestLogger(logger, fields, redact);
}

/** One object per request (made for every request the engine handles, most of which log nothing themselves). */
class RequestLogger implements Logger {
  constructor(
    private readonly logger: Logger,
    private readonly fields: RequestLogFields,
    private readonly redact: ((text: string) => string) | undefined,
  ) {}

  debug(message: string, fields?: Record<string, unknown>): void {
    this.logger.debug(this.text(message), this.withIds(fields));
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.logger.info(this.text(message), this.withIds(fields));
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.logger.warn(this.text(message), this.withIds(fields));
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.logger.error(this.text(message), this.withIds(fields));
  }

  private text(message: string): string {
    return this.redact === undefined ? message : this.redact(message);
  }

  private withIds(fields: Record<string, unknown> | undefined): Record<string, unknown> {
    if (fields === undefined) return { ...this.fields };
    const own = this.redact === undefined ? fields : redactFields(fields, 4, this.redact);
    return { ...this.fields, ...own };
  }
}

const traceparentPattern = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The trace id of a W3C `traceparent` header (lower-case hex), when it is well-formed and not all zeros. */
export function traceparentTraceId(traceparent: string | undefined): string | undefined {
  if (traceparent === undefined) return undefined;
  const traceId = traceparentPattern.exec(traceparent.trim())?.[1];
  return traceId === undefined || /^0+$/.test(traceId) ? undefined : traceId;
}

const noRequest: RequestLogFields = Object.freeze({});

/**
 * pino's options for the shape above. `formatters.log` redacts the fields (a clean line costs no copy), the
 * `logMethod` hook the message; the mixin adds the request's ids.
 */
function loggerOptions(level: LogLevel): LoggerOptions {
  return {
    level,
    // No pid or hostname: `up` names each process's lines, a container platform names its containers.
    base: null,
    messageKey: 'message',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label) => ({ level: label }),
      log: (object) => redactFields(object),
    },
    hooks: {
      logMethod(args, method) {
        for (let index = 0; index < args.length; index++) {
          const value: unknown = args[index];
          if (typeof value === 'string') (args as unknown[])[index] = redactText(value);
        }
        method.apply(this, args);
      },
    },
    mixin: () => requestFields.getStore() ?? noRequest,
    // pino's default merge assigns into the mixin's object, which here is the request's own: merged into a copy,
    // the request's ids first; outside a request the line's fields are taken as they are.
    mixinMergeStrategy: (fields, ids) => (ids === noRequest ? fields : { ...ids, ...fields }),
  };
}

/** A Logger over a pino instance. */
function loggerOver(instance: () => PinoLogger): Logger {
  const at =
    (level: LogLevel) =>
    (message: string, fields?: Record<string, unknown>): void => {
      if (fields === undefined) instance()[level](message);
      else instance()[level](fields, message);
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A logger of this shape writing to `destination` (anything with `write(line)`); tests and `up`'s view use it. */
export function createLogger(destination: DestinationStream, level: LogLevel = 'info'): Logger {
  const instance = pino(loggerOptions(level), destination);
  return loggerOver(() => instance);
}

/** `PORTCULLIS_LOG_LEVEL` (debug, info, warn, error); info when unset. */
function configuredLevel(): LogLevel {
  const wanted = process.env.PORTCULLIS_LOG_LEVEL;
  return logLevels.find((level) => level === wanted) ?? 'info';
}

let processInstance: PinoLogger | undefined;

/**
 * The process's own log: stderr (`gatheredStderr`). Opened on the first line, unless `logProcessTo` chose another
 * destination before.
 */
function processPino(): PinoLogger {
  processInstance ??= pino(loggerOptions(configuredLevel()), gatheredStderr());
  return processInstance;
}

/**
 * Writes the lines the process's log still gathers: before a line written outside it (the CLI's last words on
 * stderr), which would otherwise come before the info lines logged ahead of it.
 */
export function flushProcessLog(): void {
  processInstance?.flush();
}

/** Written at once when this much waits. */
const gatherBytes = 64 * 1024;
/** Otherwise written this long after the first line that waits. */
const gatherMs = 50;
/** The levels gathered; a line of any other level is written at once. */
const gatheredLevel = /^\{"level":"(?:debug|info)"/;

/**
 * pino's sonic-boom on stderr, fed the lines of up to 50 ms at once (or 64 KiB, and whatever waits when the process
 * exits): one write(2) per 50 ms, not one per request's access line. Gathering only until the current burst of work
 * was done (setImmediate) still meant about one write per request under load — a loaded engine's event loop turns
 * over per request — and those writes were 14 % of the engine's CPU on the sample policy (a profile under
 * `npm run bench -- transport`'s load). A line reaches the log at most 50 ms late; Envoy's own access log flushes once
 * a second. Written synchronously: sonic-boom's asynchronous mode (a write on libuv's thread pool per burst)
 * measured about 4 µs more CPU per access line, twice the line's cost, against 1.5 µs for pino's formatting.
 */
function gatheredStderr(): DestinationStream & { flush(): void } {
  const gatheredLines = gathered(pino.destination({ fd: 2, sync: true }));
  process.on('exit', gatheredLines.flush);
  return gatheredLines;
}

/** Lines for `sink` gathered as `gatheredStderr` says: written together 50 ms after the first, or at 64 KiB. */
export function gathered(sink: { write(text: string): unknown }): DestinationStream & { flush(): void } {
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === '') return;
    const lines = pending;
    pending = '';
    sink.write(lines);
  };
  return {
    write(line: string) {
      pending += line;
      // A warning or an error goes out at once (with what waits before it, in order): it may be the last line of a
      // process about to fail, and whoever watches the log wants it now. Lines start with their level (loggerOptions).
      if (pending.length >= gatherBytes || !gatheredLevel.test(line)) flush();
      else if (!scheduled) {
        scheduled = true;
        setTimeout(flush, gatherMs).unref();
      }
    },
    flush,
  };
}

/** The logger of this process (see `processPino`). */
export const processLogger: Logger = loggerOver(processPino);

/**
 * From now on the process's lines go to `destination`: `up` shows its own lines, and the management API's, the way
 * it shows its children's (src/cli/log-view.ts); a test reads what the code it runs in-process logged. Returns what
 * puts the previous destination back.
 */
export function logProcessTo(destination: DestinationStream): () => void {
  const previous = processInstance;
  previous?.flush();
  const instance = pino(loggerOptions(configuredLevel()), destination);
  processInstance = instance;
  return () => {
    if (processInstance === instance) processInstance = previous;
  };
}
