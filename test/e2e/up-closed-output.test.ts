import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { copyExample } from '../processes/example-copy.js';
import { descendantsOf } from '../processes/process-tree.js';
import { until } from '../processes/wait.js';

const cli = fileURLToPath(new URL('../../bin/portcullis.js', import.meta.url));

/** Whether the process runs (a zombie no one reaped yet has stopped). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const commandOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return `${pid}`;
  }
};

// Issue #34, item 5 (the EPIPE one): `up` exited on the closed pipe and left Envoy and the companions running.
describe('portcullis up | head -1', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'portcullis-closed-output-'));
  /** Every process seen in the family, with its command line (read while it runs). */
  const seen = new Map<number, string>();
  afterAll(() => {
    // Whatever a failing run left behind.
    for (const pid of seen.keys()) if (running(pid)) process.kill(pid, 'SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
  });

  /** Runs `command` (argv), collecting every process of its family until it exits. */
  function watchFamily(command: string, args: readonly string[]) {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Once `up` is gone its orphans are no one's descendants: the family is collected while it runs.
    let done = false;
    void exited.then(() => (done = true));
    const collected = (async () => {
      while (!done) {
        // Read again each time: a child just forked still shows its parent's command line until it execs.
        for (const pid of descendantsOf(child.pid!)) seen.set(pid, commandOf(pid));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    return {
      child,
      output: () => stdout,
      errors: () => stderr,
      exited: collected.then(() => exited),
    };
  }

  async function everyProcessStopped(pids: readonly number[]): Promise<void> {
    await until(() => pids.every((pid) => !running(pid)), 'every process up started to stop', {
      timeoutMs: 20_000,
      detail: () => pids.filter(running).map(commandOf).join('\n'),
    });
  }

  it('`| head -1`: up stops the children it started by then, exit 0, no EPIPE trace', async () => {
    const { configFile } = await copyExample(path.join(scratch, 'head'));
    seen.clear();
    const run = watchFamily('sh', [
      '-c',
      `"${process.execPath}" "${cli}" up --config "${configFile}" | head -1`,
    ]);
    expect(await run.exited).toBe(0);
    expect(run.output().split('\n').filter(Boolean)).toHaveLength(1);
    expect(run.errors()).not.toContain('EPIPE');
    const family = [...seen.keys()];
    // What was started by the time the pipe closed depends on the machine's speed (up may be gone before the family
    // is first read): the one line is a line of up's log view (it names its process), and whatever was seen of the
    // family must stop with it.
    expect(JSON.parse(run.output().split('\n')[0]!)).toHaveProperty('process');
    await everyProcessStopped(family);
  }, 90_000);

  it('a reader that goes once the gateway serves: the next line up writes stops Envoy, engine, service, backend', async () => {
    const { configFile, ports } = await copyExample(path.join(scratch, 'serving'));
    seen.clear();
    const run = watchFamily(process.execPath, [cli, 'up', '--config', configFile]);
    await until(() => run.output().includes('Press Ctrl-C to stop.'), 'up to serve', {
      timeoutMs: 60_000,
      detail: run.errors,
    });
    // The reader is done (`| head -N` had its lines) while up keeps running.
    run.child.stdout.destroy();
    const names = [/\/envoy /, / engine /, / service /, /backend\.ts/];
    const started = () => names.every((name) => [...seen.values()].some((command) => name.test(command)));
    await until(started, "Envoy, the engine, the service and the backend among up's family", {
      timeoutMs: 5000,
      detail: () => [...seen.values()].join('\n'),
    });
    const family = [...seen.keys()];
    // A request makes up write (the engine's access line): the write fails, and up stops everything.
    await fetch(`http://127.0.0.1:${ports.get('8080')}/courses/api/Course`).catch(() => undefined);
    expect(await run.exited).toBe(0);
    expect(run.errors()).not.toContain('EPIPE');
    await everyProcessStopped(family);
  }, 90_000);
});
