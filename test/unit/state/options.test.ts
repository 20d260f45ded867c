import { describe, expect, it } from 'vitest';
import { maxEmbeddedStreams, stateConfigSchema } from '../../../src/state/options.js';

const loggers = { audit: { stream: 'audit', maxLength: 100 } };

/** The messages of the issues `state` raises, each as `path: message`. */
function problems(state: unknown): string[] {
  const result = stateConfigSchema.safeParse(state);
  return result.success
    ? []
    : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('state.loggers', () => {
  it('keep their events in Redis or in the embedded store of dataDir', () => {
    expect(problems({ loggers, redis: { url: 'redis://127.0.0.1:6379' } })).toEqual([]);
    expect(problems({ loggers, dataDir: 'state' })).toEqual([]);
  });

  it('without either, the message says what is missing and names the loggers', () => {
    expect(problems({ loggers })).toEqual([
      'loggers: loggers keep their events in state.redis (Redis Streams) or state.dataDir (the embedded store), found neither (loggers: audit)',
    ]);
  });

  it('the embedded store holds a bounded number of streams; loggers may share one', () => {
    const many = (streams: number) =>
      Object.fromEntries(
        Array.from({ length: maxEmbeddedStreams + 1 }, (_, i) => [`l${i}`, { stream: `s${i % streams}` }]),
      );
    expect(problems({ dataDir: 'state', loggers: many(maxEmbeddedStreams) })).toEqual([]);
    expect(problems({ dataDir: 'state', loggers: many(maxEmbeddedStreams + 1) })).toEqual([
      `loggers: the embedded store of state.dataDir holds at most ${maxEmbeddedStreams} streams, found ${maxEmbeddedStreams + 1}: let loggers share streams, or configure state.redis`,
    ]);
    expect(
      problems({ redis: { url: 'redis://127.0.0.1:6379' }, loggers: many(maxEmbeddedStreams + 1) }),
    ).toEqual([]);
  });
});
