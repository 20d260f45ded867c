import { connect, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type ChildSpec, type GaveUp, Supervisor } from '../../../src/cli/supervisor.js';
import { SPARE, WarmSpare, wantsWarmSpare } from '../../../src/cli/warm-spare.js';
import type { Logger } from '../../../src/log.js';
import { until } from '../../processes/wait.js';

const policy = {
  initialDelayMs: 20,
  maxDelayMs: 80,
  stableAfterMs: 60_000,
  maxRestarts: 3,
  windowMs: 60_000,
};
const cleanUps: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanUp of cleanUps.splice(0)) await cleanUp();
});

/** A supervisor and a warm spare running `script`, with every line (`name | line`, `up: message`) in `lines`. */
function spareOf(script: string, lines: string[] = []) {
  const say = (message: string) => void lines.push(`up: ${message}`);
  const log: Logger = { debug: say, info: say, warn: say, error: say };
  const supervisor = new Supervisor((name, line) => lines.push(`${name} | ${line}`), policy, log);
  const spare = new WarmSpare(supervisor, { command: process.execPath, args: ['-e', script] }, policy, log);
  cleanUps.push(async () => {
    spare.close();
    await supervisor.stopAll(2000);
  });
  return { supervisor, spare };
}

/** What `engine --standby` does, in small: stand by, then on a take-over bind the port given or refuse. */
const standingBy = `
  process.send({ kind: 'standby' });
  process.on('message', (message) => {
    if (message.kind !== 'take-over') return;
    const server = require('node:net').createServer((socket) => socket.end('served by ' + process.pid));
    server.once('error', (error) =>
      process.send({ kind: 'take-over-refused', reason: error.message }, () => process.exit(1)));
    server.listen(message.port, '127.0.0.1', () => {
      console.log('listening on ' + message.port);
      process.send({ kind: 'listening', port: message.port });
    });
  });
  process.on('disconnect', () => process.exit(0));
`;

/** A port nothing listens on now (the dead engine's). */
async function freedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function greeting(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    connect(port, '127.0.0.1')
      .on('data', (chunk) => (text += chunk))
      .on('end', () => resolve(text))
      .on('error', reject);
  });
}

const engine = (restart: () => Promise<unknown>): ChildSpec => ({
  name: 'engine',
  command: process.execPath,
  args: ['-e', ''],
  ready: async () => {},
  restart,
});

describe('WarmSpare', () => {
  it('is on with one engine unless told otherwise, off with several', () => {
    const engineConfig = (ports: number[], warmSpare?: boolean) => ({
      host: '127.0.0.1',
      ports,
      messageTimeoutMs: 500,
      ...(warmSpare === undefined ? {} : { warmSpare }),
    });
    expect(wantsWarmSpare(engineConfig([0]))).toBe(true);
    expect(wantsWarmSpare(engineConfig([0], false))).toBe(false);
    expect(wantsWarmSpare(engineConfig([0, 0]))).toBe(false);
    expect(wantsWarmSpare(engineConfig([0, 0], true))).toBe(true);
  });

  it("takes a dead engine's port and becomes that engine; another spare stands by after it", async () => {
    const lines: string[] = [];
    const { supervisor, spare } = spareOf(standingBy, lines);
    expect(
      spare.takeOver(
        engine(async () => {}),
        1,
      ),
    ).toBeUndefined();
    spare.start();
    await until(() => spare.reloadable().length === 1, 'the spare standing by');
    expect(spare.reloadable()).toEqual([SPARE]);
    const port = await freedPort();
    await spare.takeOver(
      engine(async () => {}),
      port,
    );
    expect(await greeting(port)).toMatch(/^served by \d+$/);
    // Its lines are the engine's now.
    await until(() => lines.includes(`engine | listening on ${port}`), "the spare's line as the engine's");
    await until(() => spare.reloadable().length === 1, 'the next spare standing by');
    expect(supervisor.running().sort()).toEqual(['engine', SPARE]);
  });

  it('gives up a take-over on a port that is taken: the spare goes, another one starts', async () => {
    const { supervisor, spare } = spareOf(standingBy);
    spare.start();
    await until(() => spare.reloadable().length === 1, 'the spare standing by');
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    cleanUps.push(() => new Promise((resolve) => squatter.close(() => resolve())));
    const { port } = squatter.address() as { port: number };
    await expect(
      spare.takeOver(
        engine(async () => {}),
        port,
      )!,
    ).rejects.toThrow('EADDRINUSE');
    await until(() => spare.reloadable().length === 1, 'the next spare standing by');
    expect(supervisor.running()).toEqual([SPARE]);
  });

  it('starts a spare that died again, and goes on without one when it keeps dying, never giving up on the gateway', async () => {
    const lines: string[] = [];
    const { supervisor, spare } = spareOf(`setTimeout(() => process.exit(2), 20)`, lines);
    const gaveUp: GaveUp[] = [];
    supervisor.onGiveUp((giving) => gaveUp.push(giving));
    spare.start();
    await until(() => lines.some((line) => line.includes('keeps dying')), 'the spare given up on');
    expect(lines.filter((line) => line.startsWith(`up: ${SPARE}`))).toEqual([
      `up: ${SPARE} did not start (${SPARE} exited before it was ready (exit code 2)); starting another in 20 ms`,
      `up: ${SPARE} did not start (${SPARE} exited before it was ready (exit code 2)); starting another in 40 ms`,
      `up: ${SPARE} did not start (${SPARE} exited before it was ready (exit code 2)); starting another in 80 ms`,
      `up: ${SPARE} keeps dying (4 times within 60 s, last: did not start (${SPARE} exited before it was ready (exit code 2))); going on without a warm spare: an engine that dies is restarted`,
    ]);
    expect(gaveUp).toEqual([]);
    expect(supervisor.restartCounts()).toEqual({});
    expect(
      spare.takeOver(
        engine(async () => {}),
        1,
      ),
    ).toBeUndefined();
  });
});
