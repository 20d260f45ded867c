import { redactFields, redactText } from './redact.js';

/** The one logger shape every module takes: a message and structured fields. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** The fields that describe a failure in a log line: its stack (or message), credentials redacted by the logger. */
export function errorFields(error: unknown): { error: string } {
  return { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
}

/** Structured log lines on stderr, one JSON object each, with credentials redacted (see redact.ts). */
export const jsonLogger: Logger = {
  debug: () => {},
  info: (message, fields) => log('info', message, fields),
  warn: (message, fields) => log('warn', message, fields),
  error: (message, fields) => log('error', message, fields),
};

/**
 * Log lines written since the last flush. A write to stderr is a system call (synchronous for files and pipes), one
 * per request for the access log: lines are gathered and written together once the current burst of work is done
 * (setImmediate), or when 64 KiB wait, and before the process exits.
 */
let pendingLog = '';
let flushScheduled = false;
const flushAtBytes = 64 * 1024;

function log(level: string, message: string, fields?: Record<string, unknown>): void {
  pendingLog += `${logLine(new Date().toISOString(), level, redactText(message), redactFields(fields))}\n`;
  if (pendingLog.length >= flushAtBytes) flushLog();
  else if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flushLog);
  }
}

/**
 * `JSON.stringify({ time, level, message, ...fields })` without copying `fields` into a new object (once per
 * request for the access log). Fields that would come out differently from the copy — a key named like one of the
 * three, an array-index key (ordered first), a toJSON method — take the general path.
 */
function logLine(time: string, level: string, message: string, fields?: Record<string, unknown>): string {
  if (fields === undefined || fields === null) return JSON.stringify({ time, level, message });
  if (typeof fields.toJSON === 'function') return JSON.stringify({ time, level, message, ...fields });
  for (const key of Object.keys(fields)) {
    const first = key.charCodeAt(0);
    if (key === 'time' || key === 'level' || key === 'message' || (first >= 48 && first <= 57))
      return JSON.stringify({ time, level, message, ...fields });
  }
  const rest = JSON.stringify(fields);
  const head = `{"time":${JSON.stringify(time)},"level":${JSON.stringify(level)},"message":${JSON.stringify(message)}`;
  return rest === '{}' ? `${head}}` : `${head},${rest.slice(1)}`;
}

/** Writes the gathered log lines now. */
export function flushLog(): void {
  flushScheduled = false;
  if (pendingLog === '') return;
  const lines = pendingLog;
  pendingLog = '';
  process.stderr.write(lines);
}

process.on('exit', flushLog);
