import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { loadConfigFile } from '../../config/load.js';
import { EngineState } from '../../engine/engine-state.js';
import { redisOf } from '../../state/backend.js';
import { type EventId, parseEventId, type RetainedEvent } from '../../state/event-stream.js';
import { type CliCommand, UsageError } from '../command.js';
import { waitForStopSignal } from '../signals.js';

/** Entries read per round trip; a longer stream is read in pages. */
const PAGE = 1000;
/** How often --follow looks for new entries: the store has no way to tell another process something was added. */
const FOLLOW_EVERY_MS = 250;

/** One output line: what an event says, its time as ISO 8601, the partition only when the policy named one. */
export function eventLine(event: RetainedEvent): string {
  const partition = {
    ...(event.partitionId === undefined ? {} : { id: event.partitionId }),
    ...(event.partitionKey === undefined ? {} : { key: event.partitionKey }),
  };
  return JSON.stringify({
    id: event.id,
    time: new Date(event.time).toISOString(),
    ...(Object.keys(partition).length === 0 ? {} : { partition }),
    message: event.message,
  });
}

/**
 * Reads back what log-to-eventhub wrote: the retained entries of one logger's stream, where the engines keep it
 * (the embedded store of state.dataDir, or the Redis Stream with state.redis), through the engine's own state so
 * the command reads exactly where the engines write.
 */
export const command: CliCommand = {
  usage:
    'portcullis events --config FILE --logger ID [--since ID] [--follow]\n' +
    '  prints the retained events of state.loggers.ID, oldest first, one JSON line each:\n' +
    '  {"id":"<ms>-<seq>","time":"…","partition":{"id"|"key":…},"message":"…"}\n' +
    '  --since ID   only the events after ID (a bare <ms>: from that millisecond on)\n' +
    '  --follow     then print new events as they come, until interrupted',
  async run(args) {
    const { values } = parseArgs({
      args: [...args],
      options: {
        config: { type: 'string' },
        logger: { type: 'string' },
        since: { type: 'string' },
        follow: { type: 'boolean', default: false },
      },
    });
    if (!values.config) throw new UsageError('--config is required');
    if (!values.logger) throw new UsageError('--logger is required');
    let after: EventId | undefined;
    if (values.since !== undefined) {
      after = parseEventId(values.since);
      if (after === undefined)
        throw new UsageError(`--since must be an event id <ms>-<seq> or <ms>, got "${values.since}"`);
    }
    const { config, directory } = await loadConfigFile(values.config);
    const loggers = Object.keys(config.state.loggers);
    if (!loggers.includes(values.logger))
      throw new UsageError(
        `${values.config}: no logger "${values.logger}" in state.loggers (configured: ${loggers.join(', ') || 'none'})`,
      );
    const kafka = config.state.loggers[values.logger]?.kafka;
    if (kafka !== undefined)
      throw new UsageError(
        `${values.config}: logger "${values.logger}" writes to the Kafka topic ${kafka.topic}: read it with a Kafka consumer (portcullis events reads the state store's streams)`,
      );
    const otlp = config.state.loggers[values.logger]?.otlp;
    if (otlp !== undefined)
      throw new UsageError(
        `${values.config}: logger "${values.logger}" sends OTLP log records to ${otlp.endpoint}: read them where the collector keeps them (portcullis events reads the state store's streams)`,
      );

    const state = new EngineState({ state: config.state, directory });
    try {
      await redisOf(state.backend)?.ready(config.state.redis?.connectTimeoutMs ?? 1000);
      const stream = state.eventStream!;
      const stop = values.follow ? waitForStopSignal() : undefined;
      let stopped = false;
      void stop?.then(() => {
        stopped = true;
      });
      // Bounded by the stream (each page moves `after` on) and, with --follow, by the stop signal.
      while (!stopped) {
        const page = await stream.read(values.logger, {
          ...(after === undefined ? {} : { after }),
          limit: PAGE,
        });
        if (page.length > 0) {
          process.stdout.write(`${page.map(eventLine).join('\n')}\n`);
          after = parseEventId(page.at(-1)!.id);
        }
        if (page.length === PAGE) continue;
        if (stop === undefined) break;
        await Promise.race([sleep(FOLLOW_EVERY_MS), stop]);
      }
    } finally {
      await state.close();
    }
    return 0;
  },
};
