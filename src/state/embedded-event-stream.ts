import type { Database } from 'lmdb';
import type { EmbeddedState } from './embedded.js';
import {
  type BatchOutcome,
  type EventId,
  EventStream,
  type EventStreamOptions,
  type ReadRange,
  type RetainedEvent,
  type StreamEvent,
} from './event-stream.js';

/** [loggerId, message, partitionId, partitionKey]: a flat array, the cheapest msgpack shape. */
type EventRecord = [string, string, string | null, string | null];

/** Digits of each half of a stored key: ids sort as numbers when their keys sort as strings. */
const ID_DIGITS = 15;

/** The stored key of an id: both halves zero-padded, `000001732550000000-000000000000003`. */
function storedKey(id: Required<EventId>): string {
  return `${String(id.ms).padStart(ID_DIGITS, '0')}-${String(id.seq).padStart(ID_DIGITS, '0')}`;
}

function idOfKey(key: string): Required<EventId> {
  const dash = key.indexOf('-');
  return { ms: Number(key.slice(0, dash)), seq: Number(key.slice(dash + 1)) };
}

/** The named database of a stream in the environment: one per stream, so trimming one never scans another. */
export function eventDatabaseName(stream: string): string {
  return `events:${stream}`;
}

/**
 * log-to-eventhub's sink on the embedded store of `state.dataDir` (no Redis): each logger's stream is a named
 * LMDB database of entries keyed like a Redis Stream's, `<ms>-<seq>`, so every engine process of the machine
 * can append to one stream. An id is taken inside the write transaction from the stream's last entry (LMDB's
 * writer lock serialises processes), so ids increase across processes and even when the clock steps back (the
 * last ms is kept, the seq counts on), as Redis does. A batch is one transaction; the buffer in front of it is
 * the same as Redis's (EventStream), so a full disk costs memory up to the bound, never a request's latency.
 *
 * Trimming, like XADD MAXLEN ~: counting a stream walks its keys, so a process counts only after it has appended
 * a tenth of maxLength since its last count, then removes the oldest entries down to maxLength. A stream holds
 * at most about maxLength plus a tenth per process writing to it.
 */
export class EmbeddedEventStream extends EventStream {
  readonly #databases = new Map<string, Database<EventRecord, string>>();
  /** Per stream, entries this process appended since it last counted (absent: not counted yet). */
  readonly #appendedSinceCount = new Map<string, number>();

  constructor(
    private readonly state: EmbeddedState,
    options: EventStreamOptions,
    private readonly now: () => number = Date.now,
  ) {
    super(options);
  }

  protected async writeBatch(batch: readonly StreamEvent[]): Promise<BatchOutcome> {
    const byStream = new Map<string, { maxLength: number; events: StreamEvent[] }>();
    for (const event of batch) {
      const { stream, maxLength } = this.target(event.loggerId);
      let group = byStream.get(stream);
      if (group === undefined) {
        group = { maxLength, events: [] };
        byStream.set(stream, group);
      }
      group.events.push(event);
    }
    const [first] = byStream.keys();
    if (first === undefined) return { written: 0, refused: [] };
    // One write transaction for the whole batch (every named database is in the one environment).
    await this.#database(first).transaction(() => {
      const now = this.now();
      for (const [stream, { maxLength, events }] of byStream) {
        const database = this.#database(stream);
        let last: Required<EventId> | undefined;
        for (const key of database.getKeys({ reverse: true, limit: 1 })) last = idOfKey(key);
        for (const event of events) {
          last =
            last === undefined || now > last.ms ? { ms: now, seq: 0 } : { ms: last.ms, seq: last.seq + 1 };
          database.putSync(storedKey(last), [
            event.loggerId,
            event.message,
            event.partitionId ?? null,
            event.partitionKey ?? null,
          ]);
        }
        this.#trim(stream, database, maxLength, events.length);
      }
    });
    return { written: batch.length, refused: [] };
  }

  async read(loggerId: string, range: ReadRange): Promise<RetainedEvent[]> {
    const database = this.#database(this.target(loggerId).stream);
    // lmdb-js keeps one read snapshot until the next timer tick: start from the latest commit of any process.
    database.resetReadTxn();
    const after = range.after;
    const start =
      after === undefined
        ? undefined
        : after.seq === undefined
          ? `${String(after.ms).padStart(ID_DIGITS, '0')}-` // before every seq of that millisecond
          : `${storedKey({ ms: after.ms, seq: after.seq })}\u0000`; // just after the id itself
    const events: RetainedEvent[] = [];
    for (const { key, value } of database.getRange({
      ...(start === undefined ? {} : { start }),
      limit: range.limit,
    })) {
      const { ms, seq } = idOfKey(key);
      const [loggerId, message, partitionId, partitionKey] = value;
      events.push({
        id: `${ms}-${seq}`,
        time: ms,
        loggerId,
        message,
        ...(partitionId === null ? {} : { partitionId }),
        ...(partitionKey === null ? {} : { partitionKey }),
      });
    }
    return events;
  }

  /** Inside the write transaction: removes the oldest entries beyond maxLength, counting only now and then. */
  #trim(stream: string, database: Database<EventRecord, string>, maxLength: number, appended: number): void {
    const since = (this.#appendedSinceCount.get(stream) ?? Number.POSITIVE_INFINITY) + appended;
    if (since < Math.ceil(maxLength / 10)) {
      this.#appendedSinceCount.set(stream, since);
      return;
    }
    const excess = database.getKeysCount() - maxLength;
    if (excess > 0) {
      // Collected first: removing under an open cursor would move it.
      const oldest = [...database.getKeys({ limit: excess })];
      for (const key of oldest) database.removeSync(key);
    }
    this.#appendedSinceCount.set(stream, 0);
  }

  #database(stream: string): Database<EventRecord, string> {
    let database = this.#databases.get(stream);
    if (database === undefined) {
      database = this.state.database<EventRecord>(eventDatabaseName(stream));
      this.#databases.set(stream, database);
    }
    return database;
  }
}
