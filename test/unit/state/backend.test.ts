import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/config/plan.js';
import type { Logger } from '../../../src/log.js';
import {
  closeStateBackend,
  openStateBackend,
  redisOf,
  type StateBackend,
  unknownBackend,
} from '../../../src/state/backend.js';
import { sharedSealedRecords } from '../../../src/state/delegated-tokens.js';
import { stateBackendKind, stateConfigSchema } from '../../../src/state/options.js';
import { until } from '../../processes/wait.js';

const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
const logger: Logger = {
  debug: () => {},
  info: (message, fields) => lines.push({ level: 'info', message, ...(fields ? { fields } : {}) }),
  warn: (message, fields) => lines.push({ level: 'warn', message, ...(fields ? { fields } : {}) }),
  error: (message, fields) => lines.push({ level: 'error', message, ...(fields ? { fields } : {}) }),
};

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'portcullis-backend-'));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** A `state` section as the configuration loader hands it over (defaults filled in). */
const section = (state: object) => stateConfigSchema.parse(state);

describe('stateBackendKind: which backend a state section selects', () => {
  it('is Redis when configured, whether or not dataDir is set too', () => {
    expect(stateBackendKind({ redis: { url: 'redis://127.0.0.1:6379' } })).toBe('redis');
    expect(stateBackendKind({ redis: { url: 'redis://127.0.0.1:6379' }, dataDir: 'state' })).toBe('redis');
  });

  it('is the embedded store with dataDir alone, and memory with neither', () => {
    expect(stateBackendKind({ dataDir: 'state' })).toBe('embedded');
    expect(stateBackendKind({})).toBe('memory');
  });
});

describe('openStateBackend', () => {
  it('keeps everything in memory without redis or dataDir', async () => {
    const backend = openStateBackend(section({}), { directory, logger });
    expect(backend).toEqual({ kind: 'memory' });
    expect(redisOf(backend)).toBeUndefined();
    // Nothing to share: delegated tokens then stay in the process that has them.
    expect(sharedSealedRecords(backend)).toBeUndefined();
    await closeStateBackend(backend);
  });

  it('opens the embedded store in dataDir, relative to the configuration file', async () => {
    const backend = openStateBackend(section({ dataDir: 'embedded' }), { directory, logger });
    expect(backend.kind).toBe('embedded');
    expect(await exists(path.join(directory, 'embedded', 'data.mdb'))).toBe(true);
    const records = sharedSealedRecords(backend)!;
    await records.set('k', Buffer.from('sealed'));
    expect((await records.get('k'))?.toString()).toBe('sealed');
    await closeStateBackend(backend);
  });

  it('connects to Redis with the section settings, and leaves dataDir unopened', async () => {
    const port = await freePort();
    const backend = openStateBackend(
      section({
        redis: {
          url: `redis://127.0.0.1:${port}`,
          keyPrefix: 'p1:',
          commandTimeoutMs: 50,
          connectTimeoutMs: 200,
        },
        dataDir: 'unused',
      }),
      { directory, logger },
    );
    expect(backend.kind).toBe('redis');
    const connection = redisOf(backend)!;
    expect(connection.options).toMatchObject({
      url: `redis://127.0.0.1:${port}`,
      keyPrefix: 'p1:',
      commandTimeoutMs: 50,
      connectTimeoutMs: 200,
    });
    expect(await exists(path.join(directory, 'unused'))).toBe(false);
    await closeStateBackend(backend);
    await until(() => connection.client.status === 'end', 'the connection to end with the backend');
  });

  it('logs the loss of the Redis connection with its target', async () => {
    const port = await freePort();
    const backend = openStateBackend(section({ redis: { url: `redis://127.0.0.1:${port}` } }), {
      directory,
      logger,
    });
    // This backend's line: an earlier test's connection, being closed, may log its own loss meanwhile.
    const url = `redis://127.0.0.1:${port}`;
    const lost = () =>
      lines.find((line) => line.message === 'redis connection lost' && line.fields?.url === url);
    await until(() => lost() !== undefined, 'the loss logged');
    expect(lost()).toMatchObject({ level: 'warn', fields: { url } });
    await closeStateBackend(backend);
  });
});

describe('unknownBackend', () => {
  it('names the kind a switch found no case for', () => {
    const future = { kind: 'postgres' } as unknown as StateBackend;
    expect(() => unknownBackend(future as never)).toThrow(
      new TypeError('unknown state backend, got kind "postgres"'),
    );
  });
});
