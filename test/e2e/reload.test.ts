import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { hotRestartSharedMemory } from '../../src/config/envoy.js';
import { freePort } from '../../src/config/plan.js';
import { load, markingPolicy } from '../doubles/load.js';
import { descendantsOf } from '../processes/process-tree.js';
import { countSaidBy, saidBy, startUp, type UpRun } from '../processes/up.js';
import { until } from '../processes/wait.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const exampleDir = path.join(root, 'examples', 'courses');

interface Ports {
  readonly gateway: number;
  readonly admin: number;
  readonly backend: number;
}

function gatewayConfig(ports: Ports, apis: { id: string; policy: string }[]): string {
  const backendUrl = `http://127.0.0.1:${ports.backend}`;
  return stringify({
    gateway: { http: { host: '127.0.0.1', port: ports.gateway } },
    admin: { host: '127.0.0.1', port: ports.admin },
    // Hot restarts drain for a second: the tests wait for the previous Envoy to exit.
    envoy: { drainSeconds: 1, parentShutdownSeconds: 2 },
    apis: apis.map((api) => ({
      id: api.id,
      urlSuffix: api.id,
      serviceUrl: backendUrl,
      policy: api.policy,
      operations: [{ id: 'get-course', method: 'GET', urlTemplate: '/api/Course/{id}' }],
    })),
    processes: [
      {
        name: 'courses',
        command: ['node', '--import', 'tsx', 'backend.ts'],
        cwd: exampleDir,
        env: { PORT: String(ports.backend) },
        readyUrl: `${backendUrl}/healthz`,
      },
    ],
  });
}

describe('portcullis up reloads its configuration without dropping requests', () => {
  let run: UpRun;
  let ports: Ports;
  let directory: string;
  let configFile: string;
  let baseId = 0;
  const url = () => `http://127.0.0.1:${ports.gateway}/courses/api/Course/2`;
  /** The command lines of the Envoys up runs now (an epoch that is draining included). */
  const envoyCommandLines = () =>
    descendantsOf(run.child.pid!)
      .map((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        } catch {
          return []; // exited since it was listed
        }
      })
      .filter((args) => args.includes('--restart-epoch') || args.includes('--use-dynamic-base-id'));

  beforeAll(async () => {
    ports = { gateway: await freePort(), admin: await freePort(), backend: await freePort() };
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-reload-'));
    configFile = path.join(directory, 'gateway.yaml');
    await writeFile(path.join(directory, 'courses.xml'), markingPolicy('one'));
    await writeFile(configFile, gatewayConfig(ports, [{ id: 'courses', policy: 'courses.xml' }]));
    run = startUp(configFile);
    await run.waitFor('Press Ctrl-C to stop.');
  }, 60_000);

  afterAll(async () => {
    if (!run) return;
    const code = await run.stop();
    expect(code).toBe(0);
    // The hot-restart family's shared memory is removed with it.
    const baseIds = [...run.output().matchAll(/base id (\d+)/g)].map((match) => Number(match[1]));
    for (const baseId of baseIds)
      expect(existsSync(`/dev/shm/envoy_shared_memory_${baseId * 10}`)).toBe(false);
  }, 30_000);

  it('applies a changed policy under load: the new behaviour appears and no request fails', async () => {
    const stream = load(url());
    await until(() => stream.results.length >= 30, 'requests before the change');
    await writeFile(path.join(directory, 'courses.xml'), markingPolicy('two'));
    await until(
      () => stream.results.slice(-10).every((result) => result.mark === 'two'),
      'the new policy',
      15_000,
    );
    await stream.stop();

    expect(stream.failures).toEqual([]);
    expect(stream.results.filter((result) => result.status !== 200)).toEqual([]);
    const marks = stream.results.map((result) => result.mark);
    expect(marks[0]).toBe('one');
    // Once the change applied, it stays applied (only requests already in flight finish on the old pipeline).
    expect(marks.slice(marks.indexOf('two') + 6).every((mark) => mark === 'two')).toBe(true);
    // Requests may show the new policy before the log lines saying so have crossed the pipes.
    await until(
      () => saidBy(run.output(), 'up', 'configuration reloaded (policies; Envoy unchanged)'),
      'the log line',
    );
    // The engine's own line too (its info lines reach the log within 50 ms: src/log.ts gathers them).
    await until(
      () => saidBy(run.output(), 'engine', 'configuration reloaded (generation 2)'),
      "the engine's log line",
    );
  }, 40_000);

  it('refuses a broken policy with file:line:col and keeps the running one', async () => {
    const stream = load(url());
    const before = run.output().length;
    await writeFile(
      path.join(directory, 'courses.xml'),
      '<policies>\n  <inbound>\n    <rate-limit calls="many" renewal-period="10" />\n  </inbound>\n</policies>\n',
    );
    await until(() => saidBy(run.output(), 'up', 'configuration refused', before), 'the refusal', 15_000);
    // Traffic after the refusal too: the running policy keeps answering.
    const servedAtRefusal = stream.results.length;
    await until(() => stream.results.length >= servedAtRefusal + 20, 'requests after the refusal', 10_000);
    await stream.stop();

    const refusal = run
      .output()
      .slice(run.output().indexOf('configuration refused, nothing changed', before));
    expect(refusal).toContain(`${path.join(directory, 'courses.xml')}:3:`);
    expect(refusal).toContain('calls');
    expect(stream.failures).toEqual([]);
    expect(stream.results.length).toBeGreaterThan(0);
    expect(stream.results.every((result) => result.status === 200 && result.mark === 'two')).toBe(true);
    // The engines were not asked to reload a configuration up refused.
    expect(saidBy(run.output(), 'engine', 'configuration', before)).toBe(false);
  }, 30_000);

  it('takes 20 changes under load, good and bad mixed: each good one shows promptly, each bad one is refused', async () => {
    const policyFile = path.join(directory, 'courses.xml');
    const goodConfig = gatewayConfig(ports, [{ id: 'courses', policy: 'courses.xml' }]);
    const stream = load(url(), { clients: 3, maxRequests: 20_000, maxMs: 150_000 });
    const count = (text: string) => countSaidBy(run.output(), 'up', text);
    for (let change = 1; change <= 20; change++) {
      const refusals = count('configuration refused');
      if (change % 4 === 0) {
        await writeFile(
          policyFile,
          `<policies>\n  <inbound>\n    <set-header name="x" exists-action="sometimes" />\n`,
        );
      } else if (change % 4 === 2) {
        await writeFile(configFile, `${goodConfig}colour: red\n`);
      } else {
        const reloads = count('configuration reloaded');
        await writeFile(configFile, goodConfig);
        await writeFile(policyFile, markingPolicy(`change-${change}`));
        await until(
          () => stream.results.slice(-6).every((result) => result.mark === `change-${change}`),
          `change ${change}`,
          // Prompt, with room for a machine busy with the rest of the suite.
          15_000,
        );
        // The engines answer with the new policy before up has finished the reload (the service reloads last):
        // the next change starts from a settled gateway, so its refusal is not queued behind this reload.
        await until(() => count('configuration reloaded') > reloads, `the end of change ${change}`, 30_000);
        continue;
      }
      await until(() => count('configuration refused') > refusals, `the refusal of change ${change}`, 15_000);
    }
    await stream.stop();

    expect(stream.failures).toEqual([]);
    expect(stream.results.filter((result) => result.status !== 200)).toEqual([]);
    expect(stream.results.at(-1)?.mark).toBe('change-19');
    expect(run.output()).toContain(`${configFile}:`);
    expect(run.output()).toContain('colour: unknown key "colour"');
    expect(run.output()).toMatch(
      new RegExp(`${policyFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: `),
    );
  }, 160_000);

  it('publishes an added API in the running Envoy under load, without a failed request and without a new Envoy', async () => {
    await writeFile(path.join(directory, 'courses.xml'), markingPolicy('two'));
    await until(
      async () => (await fetch(url())).headers.get('x-policy') === 'two',
      'the repaired policy',
      15_000,
    );
    const envoysBefore = envoyCommandLines();
    expect(envoysBefore).toHaveLength(1);
    const stream = load(url());
    await until(() => stream.results.length >= 30, 'requests before the change');
    const reloads = countSaidBy(run.output(), 'up', 'Envoy updated in place');
    await writeFile(path.join(directory, 'more.xml'), markingPolicy('more'));
    await writeFile(
      configFile,
      gatewayConfig(ports, [
        { id: 'courses', policy: 'courses.xml' },
        { id: 'more', policy: 'more.xml' },
      ]),
    );
    const added = `http://127.0.0.1:${ports.gateway}/more/api/Course/1`;
    await until(
      async () => {
        const response = await fetch(added);
        await response.arrayBuffer();
        return response.status === 200 && response.headers.get('x-policy') === 'more';
      },
      'the added API',
      30_000,
    );
    await until(
      () => countSaidBy(run.output(), 'up', 'Envoy updated in place') > reloads,
      'the reload report',
      30_000,
    );
    const served = stream.results.length;
    await until(() => stream.results.length >= served + 20, 'requests after the change');
    await stream.stop();

    expect(stream.failures).toEqual([]);
    expect(stream.results.length).toBeGreaterThan(50);
    expect(stream.results.filter((result) => result.status !== 200 || result.mark !== 'two')).toEqual([]);
    // The same Envoy process serves: no epoch was started.
    expect(envoyCommandLines()).toEqual(envoysBefore);
    expect(run.output()).not.toContain('Envoy hot-restarted');
    expect(run.child.exitCode).toBeNull();
  }, 60_000);

  it('withdraws a removed API in the running Envoy under load, without a failed request', async () => {
    const envoysBefore = envoyCommandLines();
    const stream = load(url());
    await until(() => stream.results.length >= 30, 'requests before the change');
    await writeFile(configFile, gatewayConfig(ports, [{ id: 'courses', policy: 'courses.xml' }]));
    const removed = `http://127.0.0.1:${ports.gateway}/more/api/Course/1`;
    await until(async () => (await fetch(removed)).status === 404, 'the removed API to go', 30_000);
    const served = stream.results.length;
    await until(() => stream.results.length >= served + 20, 'requests after the change');
    await stream.stop();

    expect(stream.failures).toEqual([]);
    expect(stream.results.length).toBeGreaterThan(50);
    expect(stream.results.filter((result) => result.status !== 200 || result.mark !== 'two')).toEqual([]);
    expect((await fetch(removed)).status).toBe(404);
    expect(envoyCommandLines()).toEqual(envoysBefore);
  }, 60_000);

  it('hot-restarts Envoy for what its resources cannot change (the admin address) under load, without a failed request', async () => {
    const admin = await freePort();
    const stream = load(url());
    await until(() => stream.results.length >= 30, 'requests before the change');
    await writeFile(
      configFile,
      gatewayConfig({ ...ports, admin }, [
        { id: 'courses', policy: 'courses.xml' },
        { id: 'more', policy: 'more.xml' },
      ]),
    );
    const added = `http://127.0.0.1:${ports.gateway}/more/api/Course/1`;
    await until(async () => (await fetch(added)).status === 200, 'the added API', 30_000);
    await until(() => run.output().includes('Envoy hot-restarted'), 'the restart report', 30_000);
    // Keep the stream running until the previous Envoy drained and exited.
    await until(() => envoyCommandLines().length === 1, 'the previous Envoy to drain and exit', 30_000);
    await stream.stop();

    expect(stream.failures).toEqual([]);
    expect(stream.results.filter((result) => result.status !== 200 || result.mark !== 'two')).toEqual([]);
    const info = (await (await fetch(`http://127.0.0.1:${admin}/server_info`)).json()) as {
      command_line_options: { restart_epoch: number };
    };
    const epoch = Number(/Envoy hot-restarted, epoch (\d+)/.exec(run.output())![1]);
    expect(epoch).toBeGreaterThanOrEqual(1);
    expect(info.command_line_options.restart_epoch).toBe(epoch);
    // One Envoy is left, the new epoch, in the family's base id (whose shared memory exists while it runs).
    const envoys = envoyCommandLines();
    expect(envoys.map((args) => args[args.indexOf('--restart-epoch') + 1])).toEqual([String(epoch)]);
    baseId = Number(envoys[0]![envoys[0]!.indexOf('--base-id') + 1]);
    expect(existsSync(hotRestartSharedMemory(baseId))).toBe(true);
    expect(run.child.exitCode).toBeNull();
  }, 60_000);
});
