import { describe, expect, it, vi } from 'vitest';
import {
  createLogger,
  errorFields,
  gathered,
  type RequestLogFields,
  requestLogger,
  traceparentTraceId,
  withRequestLogFields,
} from '../../src/log.js';

/** A logger of the process shape writing into an array, each line parsed. */
function collected(level?: 'debug' | 'info') {
  const raw: string[] = [];
  const logger = createLogger({ write: (line: string) => raw.push(line) }, level);
  return { logger, raw, lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('the process logger', () => {
  it('writes one JSON line per entry: level and time first, the fields, the message last', () => {
    const { logger, raw, lines } = collected();
    logger.info('request', { api: 'courses', status: 200 });
    expect(raw).toHaveLength(1);
    expect(raw[0]!.endsWith('\n')).toBe(true);
    const [line] = lines();
    expect(Object.keys(line!)).toEqual(['level', 'time', 'api', 'status', 'message']);
    expect(line).toMatchObject({ level: 'info', api: 'courses', status: 200, message: 'request' });
    expect(new Date(line!.time as string).toISOString()).toBe(line!.time);
  });

  it('names levels by word and leaves debug out unless asked', () => {
    const quiet = collected();
    quiet.logger.debug('hidden');
    quiet.logger.warn('w');
    quiet.logger.error('e');
    expect(quiet.lines().map((line) => line.level)).toEqual(['warn', 'error']);
    const verbose = collected('debug');
    verbose.logger.debug('shown');
    expect(verbose.lines()[0]).toMatchObject({ level: 'debug', message: 'shown' });
  });

  it('redacts credentials itself: in fields, nested fields and the message', () => {
    const { logger, raw, lines } = collected();
    logger.warn('backend said Authorization: Bearer abc.def.ghi', {
      url: 'https://api.example/items?subscription-key=s3cret&page=2',
      headers: { authorization: 'Basic dXNlcjpwYXNz', accept: 'application/json' },
      detail: 'redis://:hunter2@cache:6379',
    });
    expect(raw.join('')).not.toMatch(/abc\.def|s3cret|dXNlcjpwYXNz|hunter2/);
    expect(lines()[0]).toMatchObject({
      url: 'https://api.example/items?subscription-key=***&page=2',
      headers: { authorization: '***', accept: 'application/json' },
      detail: 'redis://:***@cache:6379',
    });
  });

  it("puts the request's ids on every line logged while it is handled, across awaits, and nowhere else", async () => {
    const { logger, lines } = collected();
    const fields: RequestLogFields = {};
    logger.info('before');
    await withRequestLogFields(fields, async () => {
      // Known after the request started (the engine decides the request id in its first phase).
      fields.requestId = 'a7a1d5b2-0000-4000-8000-000000000001';
      fields.traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      await new Promise((resolve) => setTimeout(resolve, 1));
      logger.warn('inside', { element: 'cache-lookup' });
    });
    logger.info('after');
    const [before, inside, after] = lines();
    expect(before).not.toHaveProperty('requestId');
    expect(inside).toEqual({
      level: 'warn',
      time: inside!.time,
      requestId: 'a7a1d5b2-0000-4000-8000-000000000001',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      element: 'cache-lookup',
      message: 'inside',
    });
    expect(after).not.toHaveProperty('requestId');
    // The line's fields are not merged into the request's own.
    expect(fields).toEqual({
      requestId: 'a7a1d5b2-0000-4000-8000-000000000001',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    });
  });

  it("passes a request logger's message and fields through the request's own redaction, then the logger's", () => {
    const { logger, lines } = collected();
    const secret = 'partner-secret-7d41';
    const fields: RequestLogFields = { requestId: 'a7a1d5b2-0000-4000-8000-000000000002' };
    const request = requestLogger(logger, fields, (text) => text.split(secret).join('***'));
    request.warn(`send-request to ${secret} failed`, {
      url: `https://partner.example/items?sig=${secret}x`,
      detail: { error: `refused x ${secret}`, auth: `Bearer ${secret}` },
    });
    expect(lines()[0]).toMatchObject({
      requestId: 'a7a1d5b2-0000-4000-8000-000000000002',
      url: 'https://partner.example/items?sig=***',
      detail: { error: 'refused x ***', auth: 'Bearer ***' },
      message: 'send-request to *** failed',
    });
  });

  it('writes a failure as its stack', () => {
    const { logger, lines } = collected();
    logger.error('handler failed', errorFields(new Error('boom')));
    expect(lines()[0]!.error).toMatch(/^Error: boom\n\s+at /);
  });
});

describe('traceparentTraceId', () => {
  it('takes the trace id of a well-formed traceparent only', () => {
    expect(traceparentTraceId('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBe(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
    for (const bad of [
      undefined,
      '',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
      'garbage',
    ])
      expect(traceparentTraceId(bad)).toBeUndefined();
  });
});

describe('the gathered stderr writer', () => {
  it('writes the lines of many turns of the event loop at once, 50 ms after the first; a full 64 KiB or a warning at once', async () => {
    vi.useFakeTimers();
    try {
      const writes: string[] = [];
      const writer = gathered({ write: (text: string) => writes.push(text) });
      // A loaded engine's event loop turns over per request: lines of separate turns must still share a write.
      for (let line = 0; line < 20; line += 1) {
        writer.write(`{"level":"info","n":${line}}\n`);
        await vi.advanceTimersByTimeAsync(1);
      }
      expect(writes).toEqual([]);
      await vi.advanceTimersByTimeAsync(50);
      expect(writes).toHaveLength(1);
      expect(writes[0]!.split('\n').filter(Boolean)).toHaveLength(20);

      writer.write(`{"level":"info","x":"${'x'.repeat(64 * 1024)}"}\n`);
      expect(writes).toHaveLength(2);
      writer.write('{"level":"info","last":true}\n');
      writer.flush();
      expect(writes.at(-1)).toBe('{"level":"info","last":true}\n');

      // A warning or an error goes out at once, after what waited before it.
      writer.write('{"level":"info","message":"request"}\n');
      writer.write('{"level":"warn","message":"buffer full"}\n');
      expect(writes.at(-1)).toBe(
        '{"level":"info","message":"request"}\n{"level":"warn","message":"buffer full"}\n',
      );
    } finally {
      vi.useRealTimers();
    }
  });
});
