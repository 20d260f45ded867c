/**
 * How `up` shows the log lines of the processes it runs (its children, and itself): `pretty` for a person at a
 * terminal — `[engine] 12:00:01 INFO  request method=GET path=/courses/api/Course status=200` — or `json` for a log
 * pipeline, each line passed through as its process wrote it with the process's name added
 * (`{"process":"engine",…}`). A line that is not one of the processes' JSON lines (Envoy's own, a companion's
 * output) is shown as it is (pretty) or wrapped as a JSON line of the same shape (json).
 */

export const logFormats = ['pretty', 'json'] as const;
export type LogFormat = (typeof logFormats)[number];

/** `--log-format`, or pretty at a terminal and json elsewhere. */
export function chosenLogFormat(flag: string | undefined, terminal: boolean): LogFormat | undefined {
  if (flag === undefined) return terminal ? 'pretty' : 'json';
  return logFormats.find((format) => format === flag);
}

/** Shows one line `process` wrote. */
export type LogView = (process: string, line: string) => void;

export function logView(format: LogFormat, write: (text: string) => void): LogView {
  return format === 'pretty'
    ? (process, line) => write(`${prettyLine(process, line)}\n`)
    : (process, line) => write(`${jsonLine(process, line)}\n`);
}

/** The fields shown in the line's head, not among its key=value pairs. */
const headFields = new Set(['level', 'time', 'message']);

/** `[process] HH:MM:SS LEVEL message key=value …` (local time) for a log line, `[process] line` for anything else. */
export function prettyLine(process: string, line: string): string {
  const entry = logEntry(line);
  if (entry === undefined) return `[${process}] ${printable(line)}`;
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (headFields.has(key) || value === undefined) continue;
    pairs.push(`${key}=${shownValue(value)}`);
  }
  const head = `[${process}] ${printable(clockTime(entry.time))} ${printable(entry.level.toUpperCase().padEnd(5))}`;
  const message = printable(entry.message).replaceAll('\n', '\n    ');
  return [head, message, ...pairs].join(' ');
}

/**
 * The line with `"process":"<name>"` first when it is a JSON object (not parsed: the access log of every engine
 * passes here), else a log line of the common shape holding it.
 */
export function jsonLine(process: string, line: string, now: Date = new Date()): string {
  const trimmed = line.trim();
  if (trimmed.startsWith('{"') && trimmed.endsWith('}'))
    return `{"process":${JSON.stringify(process)},${trimmed.slice(1)}`;
  return JSON.stringify({ level: 'info', time: now.toISOString(), process, message: line });
}

interface LogEntry extends Record<string, unknown> {
  readonly level: string;
  readonly time: string;
  readonly message: string;
}

/** The line as a log entry of the processes' shape (src/log.ts), or undefined. */
function logEntry(line: string): LogEntry | undefined {
  if (!line.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const entry = parsed as Record<string, unknown>;
  return typeof entry.level === 'string' &&
    typeof entry.time === 'string' &&
    typeof entry.message === 'string'
    ? (entry as LogEntry)
    : undefined;
}

/**
 * Control characters other than tab and newline, written as `\u001b`: a log line carries text a client chose (a
 * path, a header), and at a terminal an escape sequence in it would be obeyed — recolour, move the cursor, rewrite
 * what was shown before.
 */
const controlCharacters = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

function printable(text: string): string {
  return text.replace(
    controlCharacters,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** HH:MM:SS in local time, or the text as written when it is no time. */
function clockTime(time: string): string {
  const date = new Date(time);
  if (Number.isNaN(date.getTime())) return time;
  const two = (value: number) => String(value).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

/**
 * A bare word when it reads unambiguously, else JSON (quoted strings, objects, arrays); a text of several lines (a
 * stack) on lines of its own, indented.
 */
function shownValue(value: unknown): string {
  if (typeof value === 'string') {
    if (value.includes('\n')) return `\n    ${printable(value).replaceAll('\n', '\n    ')}`;
    // JSON.stringify writes control characters escaped.
    return /^[^\s"=\u0000-\u001f\u007f-\u009f]+$/.test(value) ? value : JSON.stringify(value);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return JSON.stringify(value);
}
