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

  it('lets a stand-in take the place of a child that died at once: one restart, and the stand-in is that child from then on', async () => {
    const lines: string[] = [];
    const supervising = supervisor(lines);
    // Says what it is told, so its lines show under whichever name it runs as.
    const echoes = `
      process.on('message', (message) => console.log('heard ' + message.word));
      process.on('disconnect', () => process.exit(0));
    `;
    await supervising.start(node('stand-in', echoes, { ipc: true }));
    let restarts = 0;
    const spec: ChildSpec = node('worker', 'setInterval(() => {}, 1000)', {
      restart: async () => {
        restarts += 1;
      },
      standIn: async () => {
        expect(supervising.promote('stand-in', { ...spec, standIn: () => undefined })).toBe(true);
      },
    });
    const worker = await supervising.start(spec);
    expect(worker).toEqual({});
    expect(supervising.signal('worker', 'SIGKILL')).toBe(true);
    await until(() => lines.includes('up: worker is back (restart 1)'), 'the stand-in in its place');
    expect(lines).toContain(
      'up: worker exited (killed by SIGKILL); its warm spare takes its place (restart 1)',
    );
    expect(restarts).toBe(0);
    expect(supervising.running()).toEqual(['worker']);
    expect(supervising.restartCounts()).toEqual({ worker: 1 });
    expect(supervising.send('worker', { word: 'hello' })).toBe(true);
    await until(() => lines.includes('worker | heard hello'), 'the stand-in speaking as the worker');
    // Its death is the worker's: with no stand-in left, the restart after the delay (doubled: it lived briefly).
    expect(supervising.signal('worker', 'SIGKILL')).toBe(true);
    await until(() => restarts === 1, 'the restart');
    expect(lines).toContain('up: worker exited (killed by SIGKILL); restarting in 40 ms (restart 2)');
  });

  it('restarts a child after the delay when its stand-in fails to take its place', async () => {
    const lines: string[] = [];
    const supervising = supervisor(lines);
    let restarts = 0;
    await supervising.start(
      node('worker', 'setTimeout(() => process.exit(3), 30)', {
        restart: async () => {
          restarts += 1;
        },
        standIn: () => Promise.reject(new Error('port 4000 is taken')),
      }),
    );
    await until(() => restarts === 1, 'the restart');
    expect(lines.filter((line) => line.startsWith('up: worker'))).toEqual([
      'up: worker exited (exit code 3); its warm spare takes its place (restart 1)',
      "up: worker's warm spare did not take its place (port 4000 is taken); restarting in 20 ms (restart 1)",
      'up: worker is back (restart 1)',
    ]);
  });

  it('hands the death of a child with `died` to it, not to onUnexpectedExit, and answers requests over IPC', async () => {
    const supervising = supervisor();
    const unexpected: string[] = [];
    supervising.onUnexpectedExit((exit) => unexpected.push(exit.name));
    const died: string[] = [];
    await supervising.start(
      node(
        'answering',
        `process.on('message', (message) => { process.send({ kind: 'answer', to: message.ask }); if (message.ask === 'go') process.exit(6); });`,
        { ipc: true, died: (exit) => died.push(`${exit.name} ${exit.code}`) },
      ),
    );
    const isAnswer = (message: unknown): message is { kind: 'answer'; to: string } =>
      (message as { kind?: unknown } | null)?.kind === 'answer';
    expect(await supervising.request('answering', { ask: 'ping' }, isAnswer, 2000)).toEqual({
      kind: 'answer',
      to: 'ping',
    });
    await expect(supervising.request('nobody', { ask: 'ping' }, isAnswer, 2000)).rejects.toThrow(
      'nobody is not running',
    );
    await supervising.request('answering', { ask: 'go' }, isAnswer, 2000);
    await until(() => died.length > 0, 'the death');
    expect(died).toEqual(['answering 6']);
    expect(unexpected).toEqual([]);
  });
});
