import { describe, expect, it } from 'vitest';
import {
  type BatchOutcome,
  EventStream,
  type RetainedEvent,
  type StreamEvent,
} from '../../../src/state/event-stream.js';

/** A sink that is down until told otherwise: every write fails, so events stay in the buffer. */
class DownSink extends EventStream {
  up = false;
  readonly written: string[] = [];
  protected async writeBatch(batch: readonly StreamEvent[]): Promise<BatchOutcome> {
    if (!this.up) throw new Error('down');
    this.written.push(...batch.map((event) => event.message));
    return { written: batch.length, refused: [] };
  }
  async read(): Promise<RetainedEvent[]> {
    return [];
  }
}

const targets = new Map([['audit', { stream: 'audit', maxLength: 10 }]]);

describe('the event buffer', () => {
  it('is bounded in bytes as well as in count: beyond either, new events are dropped and counted', async () => {
    // "audit" and a 100-character message: 2 × 105 = 210 bytes an event; 1000 bytes hold four.
    const sink = new DownSink({ targets, bufferSize: 100, bufferBytes: 1000, retryMs: 60_000 });
    const outcomes = Array.from({ length: 6 }, (_, i) =>
      sink.send({ loggerId: 'audit', message: String(i).padEnd(100, '.') }),
    );
    expect(outcomes).toEqual(['queued', 'queued', 'queued', 'queued', 'dropped', 'dropped']);
    expect(sink.pending).toBe(4);
    expect(sink.pendingBytes).toBe(840);
    expect(sink.dropped).toBe(2);

    // Back up: the held events go out in order, their bytes are freed, and new ones are taken again.
    sink.up = true;
    await sink.flush();
    expect(sink.written.map((message) => message[0])).toEqual(['0', '1', '2', '3']);
    expect(sink.pendingBytes).toBe(0);
    expect(sink.send({ loggerId: 'audit', message: 'again' })).toBe('queued');
    await sink.close();
    expect(sink.written.at(-1)).toBe('again');
  });
});
