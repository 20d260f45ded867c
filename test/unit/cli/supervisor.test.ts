import { afterEach, describe, expect, it } from 'vitest';
import { isListeningReport, isReloadReport, type ReloadReport } from '../../../src/cli/child-report.js';
import { type ChildOutput, type ChildSpec, type GaveUp, Supervisor } from '../../../src/cli/supervisor.js';
import type { Logger } from '../../../src/log.js';
import { elapse, until } from '../../processes/wait.js';

const supervisors: Supervisor[] = [];

afterEach(async () => {
  for (const supervisor of supervisors.splice(0)) await supervisor.stopAll(2000);
});

/** The children's lines as `name | line`, the supervisor's own messages as `up: message`. */
function into(lines: string[]): [ChildOutput, Logger] {
  const say = (message: string) => void lines.push(`up: ${message}`);
  return [(name, line) => lines.push(`${name} | ${line}`), { debug: say, info: say, warn: say, error: say }];
}

function supervisor(lines: string[] = []) {
  const [out, log] = into(lines);
  const made = new Supervisor(
    out,
    { initialDelayMs: 20, maxDelayMs: 80, stableAfterMs: 60_000, maxRestarts: 3, windowMs: 60_000 },
    log,
  );
  supervisors.push(made);
  return made;
}

/** A Node child that runs `script` (CommonJS). */
function node(name: string, script: string, extra: Partial<ChildSpec> = {}): ChildSpec {
  return { name, command: process.execPath, args: ['-e', script], ready: async () => {}, ...extra };
}

/** Binds port 0 itself and reports the port it got to its parent, as the engine and the service do. */
const reportsItsPort = `
  const server = require('node:net').createServer((socket) => socket.end('hello'));
  server.listen(0, '127.0.0.1', () => process.send({ kind: 'listening', port: server.address().port }));
  process.on('disconnect', () => process.exit(0));
`;

describe('Supervisor', () => {
  it('takes the port a child bound and reported over IPC, and its readiness probe can use it', async () => {
    const probed: number[] = [];
    const started = await supervisor().start(
      node('reporter', reportsItsPort, {
        ipc: true,
        ready: async (_signal, child) => {
          const port = await child.port;
          probed.push(port);
          const response = await fetch(`http://127.0.0.1:${port}/`).catch((error: Error) => error);
          // Not HTTP, but it answered on that port.
          expect(response).toBeInstanceOf(Error);
        },
      }),
    );
    expect(started.port).toBeGreaterThan(0);
    expect(probed).toEqual([started.port]);
  });

  it('takes only well-formed reports', () => {
    expect(isListeningReport({ kind: 'listening', port: 8080 })).toBe(true);
    for (const message of [
      { kind: 'listening', port: 0 },
      { kind: 'listening', port: 70_000 },
      { kind: 'listening', port: '8080' },
      { kind: 'other', port: 8080 },
      null,
      'listening 8080',
    ])
      expect(isListeningReport(message)).toBe(false);
  });

  it('hears the reload reports a child sends over IPC, by child, whatever the child prints', async () => {
    const supervising = supervisor();
    const reports: [string, ReloadReport][] = [];
    const stopListening = supervising.onReloadReport((name, report) => reports.push([name, report]));
    // Prints a line that looks like an answer but is not one, then answers each SIGHUP over IPC: the first reload
    // takes, the second is refused.
    const script = `
      console.log('engine: configuration reloaded (generation 9)');
      let hangups = 0;
      process.on('SIGHUP', () => {
        hangups += 1;
        process.send(hangups === 1 ? { kind: 'reload', ok: true, generation: 2 } : { kind: 'reload', ok: false, errors: 'bad policy' });
      });
      process.send({ kind: 'listening', port: 4321 });
      process.on('disconnect', () => process.exit(0));
    `;
    await supervising.start(
      node('reloader', script, { ipc: true, ready: async (_signal, child) => void (await child.port) }),
    );
    expect(supervising.signal('reloader', 'SIGHUP')).toBe(true);
    await until(() => reports.length === 1, 'the first reload report');
    expect(supervising.signal('reloader', 'SIGHUP')).toBe(true);
    await until(() => reports.length === 2, 'the second reload report');
    expect(reports).toEqual([
      ['reloader', { kind: 'reload', ok: true, generation: 2 }],
      ['reloader', { kind: 'reload', ok: false, errors: 'bad policy' }],
    ]);
    stopListening();
  });

  it('takes only well-formed reload reports', () => {
    expect(isReloadReport({ kind: 'reload', ok: true })).toBe(true);
    expect(isReloadReport({ kind: 'reload', ok: true, generation: 3 })).toBe(true);
    expect(isReloadReport({ kind: 'reload', ok: false, errors: 'why' })).toBe(true);
    for (const message of [
      { kind: 'reload', ok: false },
      { kind: 'reload', ok: 'true' },
      { kind: 'reload', ok: true, generation: 'two' },
      { kind: 'listening', port: 8080 },
      null,
      'engine: configuration reloaded',
    ])
      expect(isReloadReport(message)).toBe(false);
  });

  it('restarts a child that dies while it serves, waiting longer each time, and gives up on one that keeps dying', async () => {
    const lines: string[] = [];
    const supervising = supervisor(lines);
    const gaveUp = new Promise<GaveUp>((resolve) => supervising.onGiveUp(resolve));
    let starts = 0;
    const spec: ChildSpec = node('fragile', 'setTimeout(() => process.exit(3), 50)', {
      restart: () => {
        starts += 1;
        return supervising.start(spec);
      },
    });
    await supervising.start(spec);
    const giving = await gaveUp;
    expect(giving).toEqual({ family: 'fragile', last: 'exited (exit code 3)', deaths: 4, windowMs: 60_000 });
    expect(starts).toBe(3);
    expect(lines.filter((line) => line.startsWith('up: fragile exited'))).toEqual([
      'up: fragile exited (exit code 3); restarting in 20 ms (restart 1)',
      'up: fragile exited (exit code 3); restarting in 40 ms (restart 2)',
      'up: fragile exited (exit code 3); restarting in 80 ms (restart 3)',
    ]);
    expect(supervising.restartCounts()).toEqual({ fragile: 3 });
  });

  it('counts a restart that fails before the child is ready as one more death', async () => {
    const lines: string[] = [];
    const supervising = supervisor(lines);
    const gaveUp = new Promise<GaveUp>((resolve) => supervising.onGiveUp(resolve));
    const broken = node('broken', 'process.exit(4)', { ready: () => new Promise(() => {}) });
    await supervising.start(
      node('broken', 'setTimeout(() => process.exit(3), 50)', {
        restart: () => supervising.start(broken),
      }),
    );
    const giving = await gaveUp;
    expect(giving.last).toBe('did not come back (broken exited before it was ready (exit code 4))');
    expect(lines).toContain(
      'up: broken did not come back (broken exited before it was ready (exit code 4)); restarting in 40 ms (restart 2)',
    );
  });

  it('restarts nothing once it stops everything', async () => {
    const lines: string[] = [];
    const supervising = supervisor(lines);
    let restarts = 0;
    const spec: ChildSpec = node('steady', 'setInterval(() => {}, 1000)', {
      restart: async () => {
        restarts += 1;
      },
    });
    await supervising.start(spec);
    await supervising.stopAll(2000);
    expect(supervising.running()).toEqual([]);
    // Past the longest restart delay of the policy (80 ms): a bounded wait is what shows that nothing happened.
    await elapse(150);
    expect(restarts).toBe(0);
    expect(lines.filter((line) => line.startsWith('up:'))).toEqual([]);
  });

  it('cancels a restart that waits for its delay when it stops everything (Ctrl-C during a backoff)', async () => {
    const lines: string[] = [];
    const [out, log] = into(lines);
    const supervising = new Supervisor(
      out,
      { initialDelayMs: 300, maxDelayMs: 300, stableAfterMs: 60_000, maxRestarts: 3, windowMs: 60_000 },
      log,
    );
    supervisors.push(supervising);
    let restarts = 0;
    await supervising.start(
      node('fragile', 'setTimeout(() => process.exit(3), 30)', {
        restart: async () => {
          restarts += 1;
        },
      }),
    );
    await until(() => lines.some((line) => line.includes('restarting in 300 ms')), 'the scheduled restart');
    await supervising.stopAll(2000);
    // Past the delay the restart was scheduled for: a bounded wait is what shows that nothing happened.
    await elapse(500);
    expect(restarts).toBe(0);
  });

  it('reports the death of a child without a restart to onUnexpectedExit', async () => {
    const supervising = supervisor();
    const deaths: string[] = [];
    supervising.onUnexpectedExit((exit) => deaths.push(`${exit.name} ${exit.code}`));
    await supervising.start(node('once', 'setTimeout(() => process.exit(5), 30)'));
    await until(() => deaths.length > 0, 'the death');
    expect(deaths).toEqual(['once 5']);
  });
});
