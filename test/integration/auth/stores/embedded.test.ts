import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedStores } from '../../../../src/auth/stores/embedded.js';
import type { AuthorizationCodeRecord, InteractionRecord } from '../../../../src/auth/stores/types.js';
import { until } from '../../../processes/wait.js';
import { START, storeSecretRecords } from '../../../suites/auth-stores.js';
import { EmbeddedDirectories } from './harness.js';

/** What only the embedded store promises: nothing secret in its files, the sweep, several processes, crashes. */

const directories = new EmbeddedDirectories();
afterAll(() => directories.release());

const child = fileURLToPath(new URL('../../../processes/auth-store-worker.ts', import.meta.url));

/** Runs test/processes/auth-store-worker.ts; `lines()` is every complete line it printed so far. */
function runChild(...args: string[]): { process: ChildProcess; lines(): string[]; exited: Promise<unknown> } {
  const spawned = spawn(process.execPath, ['--import', 'tsx', child, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  let errors = '';
  spawned.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  spawned.stderr!.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const exited = new Promise((resolve) => spawned.once('exit', (code, signal) => resolve(code ?? signal)));
  return {
    process: spawned,
    // A line cut by the kill was not acknowledged: only lines ended by a newline count.
    lines: () => output.split('\n').slice(0, -1),
    exited: exited.then((status) => {
      if (status !== 0 && status !== 'SIGKILL')
        throw new Error(`auth-store-worker ${args[0]} exited ${status}: ${errors}`);
      return status;
    }),
  };
}

const code = (id: string, expiresAt: number): AuthorizationCodeRecord => ({
  id,
  clientId: 'c1',
  redirectUri: undefined,
  codeChallenge: 'x',
  codeChallengeMethod: 'S256',
  scope: ['read:courses-work'],
  resource: 'r',
  sub: 'alice',
  authTime: START,
  grantId: 'g1',
  expiresAt,
  consumed: false,
});

describe('embedded auth stores', () => {
  it('keep session and interaction identifiers, CSRF tokens and users out of the files', async () => {
    const directory = directories.create();
    const state = directories.open(directory);
    const stores = createEmbeddedStores(state, { now: () => START });
    const { sessionId, interaction, secrets } = await storeSecretRecords(stores, START);
    await stores.close();

    const files = readFileSync(path.join(directory, 'data.mdb')).toString('latin1');
    expect(files).toContain('auth.sessions'); // the right file: the named databases are in it
    for (const secret of secrets) expect(files).not.toContain(secret);
    expect(await stores.interactions.get(interaction.id)).toEqual(interaction);

    // A sealed value moved under another identifier's key does not open.
    const otherId = 'OTHERsessionOTHERsession1234';
    await stores.sessions.set(otherId, { id: otherId, expiresAt: START + 600 }, START + 600);
    const sessions = state.database<unknown>('auth.sessions');
    const entries = [...sessions.getRange()].map(({ key, value }) => ({ key, value }));
    expect(entries).toHaveLength(2);
    await sessions.put(entries[0]!.key, entries[1]!.value);
    await sessions.put(entries[1]!.key, entries[0]!.value);
    expect(await stores.sessions.get(sessionId)).toBeUndefined();
    expect(await stores.sessions.get(otherId)).toBeUndefined();
  });

  it('open a data directory whose name looks like a file name', async () => {
    const directory = path.join(directories.create(), 'state.v1');
    const stores = createEmbeddedStores(directories.open(directory), { now: () => START });
    await stores.codes.put(code('dotted', START + 60));
    expect((await stores.codes.find('dotted'))?.id).toBe('dotted');
    expect(readFileSync(path.join(directory, 'data.mdb')).length).toBeGreaterThan(0);
    await stores.close();
  });

  it('sweep every kind of expired record and keep the live ones', async () => {
    const state = directories.open(directories.create());
    let now = START;
    const stores = createEmbeddedStores(state, { now: () => now });
    await stores.codes.put(code('short', START + 60));
    await stores.codes.put(code('long', START + 600));
    await stores.refreshTokens.put({ ...code('rt', START + 60), issuedAt: START });
    await stores.grants.put({
      id: 'g1',
      clientId: 'c1',
      sub: 'alice',
      scope: [],
      resource: 'r',
      createdAt: START,
      expiresAt: START + 60,
      revoked: false,
    });
    await stores.denylist.add('jti', START + 60);
    await stores.sessions.set('s', { id: 's', expiresAt: START + 60 }, START + 60);
    await stores.interactions.set('i', { id: 'i' } as InteractionRecord, START + 60);
    await stores.consents.set('alice\nc1', { scope: [], resources: [] }, START + 60);
    await stores.counters.increment('ip', 60);
    expect(await stores.sweep()).toBe(0);

    now += 60;
    expect(await stores.sweep()).toBe(8);
    const keys = (name: string) => [...state.database(`auth.${name}`).getKeys()];
    expect(keys('codes')).toEqual(['long']);
    for (const name of ['refresh', 'grants', 'deny', 'sessions', 'interactions', 'consents', 'counters'])
      expect(keys(name)).toEqual([]);
    await stores.close();
  });

  it('let two processes race for the same codes: each code is won exactly once', async () => {
    const directory = directories.create();
    const now = Math.floor(Date.now() / 1000);
    const stores = createEmbeddedStores(directories.open(directory));
    const count = 300;
    await Promise.all(
      Array.from({ length: count }, (_, i) => stores.codes.put(code(`code-${i}`, now + 600))),
    );
    const racers = [
      runChild('consume', directory, String(count)),
      runChild('consume', directory, String(count)),
    ];
    await until(() => racers.every((racer) => racer.lines()[0] === 'ready'), 'both racers to be ready');
    for (const racer of racers) racer.process.stdin!.end('go\n');
    await Promise.all(racers.map((racer) => racer.exited));
    const [first, second] = racers.map((racer) => racer.lines().slice(1));
    expect(first!.filter((id) => second!.includes(id))).toEqual([]);
    expect([...first!, ...second!].sort()).toEqual(
      Array.from({ length: count }, (_, i) => `code-${i}`).sort(),
    );
    // Both did win some: the race really ran in two processes at once.
    expect(first!.length * second!.length).toBeGreaterThan(0);
    await stores.close();
  });

  it('keep every acknowledged write of a process SIGKILLed mid-stream, and stay readable', async () => {
    const directory = directories.create();
    const writer = runChild('write', directory);
    await until(() => writer.lines().length >= 500, 'the writer to acknowledge 500 writes', {
      timeoutMs: 20_000,
    });
    writer.process.kill('SIGKILL');
    expect(await writer.exited).toBe('SIGKILL');
    const acknowledged = writer.lines();

    const state = directories.open(directory);
    const stores = createEmbeddedStores(state);
    const missing: string[] = [];
    for (const id of acknowledged) if ((await stores.refreshTokens.find(id)) === undefined) missing.push(id);
    expect(missing).toEqual([]);
    // The whole database reads back, and takes new writes.
    const stored = [...state.database('auth.refresh').getRange()].length;
    expect(stored).toBeGreaterThanOrEqual(acknowledged.length);
    await stores.codes.put(code('after-the-crash', Math.floor(Date.now() / 1000) + 60));
    expect((await stores.codes.find('after-the-crash'))?.id).toBe('after-the-crash');
    await stores.close();
  });
});
