import { afterEach, describe, expect, it } from 'vitest';
import type { EventStream, EventStreamOptions, StreamTarget } from '../../src/state/event-stream.js';

/**
 * The one specification of log-to-eventhub's sink, run against every backend that retains events (Redis Streams,
 * the embedded store): what `send` answers, what the stream keeps and in which order, how it is read back, its
 * bounded buffer and its trimming. Cases use fresh stream names, so they share one Redis or one data directory.
 */
export interface EventStreamBackend {
  open(options: EventStreamOptions): EventStream;
  /**
   * The most entries a stream trimmed to `maxLength` may hold after many appends: about maxLength (Redis trims
   * whole radix-tree nodes of 100 entries; the embedded store counts every tenth of maxLength).
   */
  trimmedBound(maxLength: number): number;
}

let unique = 0;
const streamName = (name: string) => `${name}-${process.pid}-${++unique}`;

export function eventStreamSuite(name: string, backend: () => EventStreamBackend): void {
  describe(`${name}: event stream`, () => {
    const opened: EventStream[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((stream) => stream.close()));
    });

    function open(targets: Record<string, StreamTarget>, bufferSize = 1000): EventStream {
      const stream = backend().open({ targets: new Map(Object.entries(targets)), bufferSize, retryMs: 50 });
      opened.push(stream);
      return stream;
    }

    it('refuses a logger it was not configured with; queues the others without waiting', () => {
      const stream = open({ audit: { stream: streamName('known'), maxLength: 100 } });
      expect(stream.send({ loggerId: 'nobody', message: 'x' })).toBe('unknown-logger');
      expect(stream.send({ loggerId: 'audit', message: 'x' })).toBe('queued');
      expect(stream.pending).toBe(1);
      expect(stream.has('audit')).toBe(true);
      expect(stream.has('nobody')).toBe(false);
    });

    it('keeps the events in order with their fields, under increasing <ms>-<seq> ids', async () => {
      const stream = open({ audit: { stream: streamName('fields'), maxLength: 100 } });
      const before = Date.now();
      stream.send({ loggerId: 'audit', message: 'first', partitionKey: 'user-1' });
      stream.send({ loggerId: 'audit', message: 'second', partitionId: '3' });
      stream.send({ loggerId: 'audit', message: 'third' });
      await stream.flush();
      const events = await stream.read('audit', { limit: 10 });
      expect(events.map(({ id: _, time: __, ...rest }) => rest)).toEqual([
        { loggerId: 'audit', message: 'first', partitionKey: 'user-1' },
        { loggerId: 'audit', message: 'second', partitionId: '3' },
        { loggerId: 'audit', message: 'third' },
      ]);
      for (const event of events) {
        expect(event.id).toMatch(/^\d+-\d+$/);
        expect(event.time).toBe(Number(event.id.split('-')[0]));
        expect(event.time).toBeGreaterThanOrEqual(before - 1000);
        expect(event.time).toBeLessThanOrEqual(Date.now() + 1000);
      }
      const ids = events.map((event) => event.id.split('-').map(Number) as [number, number]);
      for (let i = 1; i < ids.length; i++) {
        const [ms, seq] = ids[i]!;
        const [previousMs, previousSeq] = ids[i - 1]!;
        expect(ms > previousMs || (ms === previousMs && seq > previousSeq)).toBe(true);
      }
      expect(stream.sent).toBe(3);
    });

    it('reads after an id, a page at a time, and from a bare millisecond on', async () => {
      const stream = open({ audit: { stream: streamName('pages'), maxLength: 100 } });
      for (let i = 0; i < 7; i++) stream.send({ loggerId: 'audit', message: `m${i}` });
      await stream.flush();
      const messages: string[] = [];
      let after: { ms: number; seq: number } | undefined;
      for (let page = 0; page < 10; page++) {
        const events = await stream.read('audit', { ...(after === undefined ? {} : { after }), limit: 3 });
        messages.push(...events.map((event) => event.message));
        if (events.length < 3) break;
        const [ms, seq] = events.at(-1)!.id.split('-').map(Number) as [number, number];
        after = { ms, seq };
      }
      expect(messages).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
      const all = await stream.read('audit', { limit: 100 });
      const fromFirstMs = await stream.read('audit', { after: { ms: all[0]!.time }, limit: 100 });
      expect(fromFirstMs.map((event) => event.message)).toEqual(messages);
      const later = await stream.read('audit', { after: { ms: all.at(-1)!.time + 1 }, limit: 100 });
      expect(later).toEqual([]);
    });

    it('holds at most bufferSize events: beyond, sends are dropped and counted; the held ones arrive', async () => {
      const stream = open({ audit: { stream: streamName('bounded'), maxLength: 1000 } }, 50);
      // Synchronous sends: the first write starts only after this loop, so the buffer fills.
      const outcomes = Array.from({ length: 60 }, (_, i) =>
        stream.send({ loggerId: 'audit', message: `e${i}` }),
      );
      expect(outcomes.filter((outcome) => outcome === 'queued')).toHaveLength(50);
      expect(outcomes.filter((outcome) => outcome === 'dropped')).toHaveLength(10);
      expect(stream.dropped).toBe(10);
      await stream.flush();
      const events = await stream.read('audit', { limit: 100 });
      expect(events.map((event) => event.message)).toEqual(Array.from({ length: 50 }, (_, i) => `e${i}`));
    });

    it('trims each stream to about maxLength, keeping the newest', async () => {
      const stream = open({
        audit: { stream: streamName('trimmed'), maxLength: 20 },
        other: { stream: streamName('untouched'), maxLength: 1000 },
      });
      stream.send({ loggerId: 'other', message: 'kept' });
      // 400 events in rounds that fit the buffer, each round its own writes.
      for (let round = 0; round < 10; round++) {
        for (let i = 0; i < 40; i++)
          expect(stream.send({ loggerId: 'audit', message: `bulk ${round * 40 + i}` })).toBe('queued');
        await stream.flush();
      }
      const events = await stream.read('audit', { limit: 1000 });
      expect(events.length).toBeGreaterThanOrEqual(20);
      expect(events.length).toBeLessThanOrEqual(backend().trimmedBound(20));
      expect(events.at(-1)!.message).toBe('bulk 399');
      expect(await stream.read('other', { limit: 10 })).toHaveLength(1);
      expect(stream.sent).toBe(401);
    });

    it('close writes what is queued, then drops what comes after', async () => {
      const target = { audit: { stream: streamName('closed'), maxLength: 100 } };
      const stream = open(target);
      stream.send({ loggerId: 'audit', message: 'before close' });
      await stream.close();
      expect(stream.send({ loggerId: 'audit', message: 'after close' })).toBe('dropped');
      const reader = open(target);
      expect((await reader.read('audit', { limit: 10 })).map((event) => event.message)).toEqual([
        'before close',
      ]);
    });
  });
}
