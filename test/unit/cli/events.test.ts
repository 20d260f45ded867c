import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { command, eventLine } from '../../../src/cli/commands/events.js';

describe('portcullis events', () => {
  let directory: string;
  let config: string;

  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-events-cli-'));
    config = path.join(directory, 'gateway.yaml');
    await writeFile(config, 'state:\n  dataDir: state\n  loggers:\n    audit: { stream: audit }\n');
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('prints an event as one JSON line: id, ISO time, the partition only when named, the message', () => {
    const time = Date.UTC(2026, 10, 25, 16, 0, 0, 123);
    expect(eventLine({ id: `${time}-2`, time, loggerId: 'audit', message: 'GET 1', partitionKey: 'k' })).toBe(
      `{"id":"${time}-2","time":"2026-11-25T16:00:00.123Z","partition":{"key":"k"},"message":"GET 1"}`,
    );
    expect(eventLine({ id: `${time}-0`, time, loggerId: 'audit', message: 'm' })).toBe(
      `{"id":"${time}-0","time":"2026-11-25T16:00:00.123Z","message":"m"}`,
    );
  });

  it('refuses a missing logger, one not configured, and a malformed --since', async () => {
    await expect(command.run(['--config', config])).rejects.toThrow('--logger is required');
    await expect(command.run(['--config', config, '--logger', 'nobody'])).rejects.toThrow(
      `${config}: no logger "nobody" in state.loggers (configured: audit)`,
    );
    await expect(
      command.run(['--config', config, '--logger', 'audit', '--since', 'yesterday']),
    ).rejects.toThrow('--since must be an event id <ms>-<seq> or <ms>, got "yesterday"');
  });
});
