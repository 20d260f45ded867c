import { type Logger, logProcessTo } from '../../src/log.js';

export interface LoggedLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields?: Record<string, unknown>;
}

/** A logger that keeps what it is given, for tests that assert what was logged. */
export function recordingLogger(): { logger: Logger; lines: LoggedLine[] } {
  const lines: LoggedLine[] = [];
  const at = (level: LoggedLine['level']) => (message: string, fields?: Record<string, unknown>) =>
    lines.push({ level, message, ...(fields ? { fields } : {}) });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

/** The process logger's lines (src/log.ts), parsed, from now until `stop`: what code running in the test logged. */
export function captureProcessLog(): {
  lines(): Record<string, unknown>[];
  /** Everything written, as written. */
  text(): string;
  stop(): void;
} {
  const written: string[] = [];
  const stop = logProcessTo({ write: (line: string) => void written.push(line) });
  return {
    lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>),
    text: () => written.join(''),
    stop,
  };
}

/** The engine's structured log lines (one JSON object each), as written while `run` ran. */
export async function logLines(run: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const log = captureProcessLog();
  try {
    await run();
  } finally {
    log.stop();
  }
  return log.lines();
}
