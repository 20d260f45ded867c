import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { envoyArgs } from '../../src/config/envoy.js';
import { findEnvoy } from '../../src/envoy/binary.js';
import { buildBootstrap } from '../../src/envoy/bootstrap/bootstrap.js';
import type { BootstrapPlan, Endpoint } from '../../src/envoy/bootstrap/plan.js';
import { stopProcess } from './child.js';
import { until } from './wait.js';

export interface RunningEnvoy {
  readonly adminUrl: string;
  readonly gatewayUrl: string;
  /** Envoy's counters and gauges as name → value (admin `/stats?format=json`). */
  stats(filter?: string): Promise<Map<string, number>>;
  /** Everything Envoy wrote to stderr so far, for assertion messages. */
  log(): string;
  /** Whether the Envoy process is still running (it has not crashed or exited). */
  running(): boolean;
  stop(): Promise<void>;
}

/**
 * Starts a real Envoy (the project's pinned binary; a missing binary fails the test with the install hint) on the
 * plan's ports and waits until its admin `/ready` says LIVE.
 */
export async function startEnvoy(
  plan: BootstrapPlan,
  /** The generated bootstrap, or one a test changed (as JSON: the changes need not fit Envoy's types). */
  bootstrap: Record<string, unknown> = buildBootstrap(plan),
): Promise<RunningEnvoy> {
  return startEnvoyWith(bootstrap, { admin: plan.admin, gateway: plan.gateway });
}

/**
 * Starts a real Envoy on any bootstrap, one Portcullis did not generate too (a hand-written example's), given where
 * its admin and its gateway listener are.
 */
export async function startEnvoyWith(
  bootstrap: Record<string, unknown>,
  addresses: { readonly admin: Endpoint; readonly gateway: Endpoint },
): Promise<RunningEnvoy> {
  const binary = findEnvoy();
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-test-envoy-'));
  const file = path.join(directory, 'envoy.yaml');
  await writeFile(file, stringify(bootstrap));
  const child: ChildProcess = spawn(binary, envoyArgs(file, { concurrency: 1, logLevel: 'warning' }), {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const adminUrl = `http://${addresses.admin.host}:${addresses.admin.port}`;

  try {
    await until(
      async () => {
        if (child.exitCode !== null) throw new Error(`envoy exited with ${child.exitCode}:\n${output}`);
        const ready = await fetch(`${adminUrl}/ready`)
          .then((response) => response.text())
          .catch(() => '');
        return ready.includes('LIVE');
      },
      'envoy to be ready',
      { timeoutMs: 20_000, detail: () => output },
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }

  return {
    adminUrl,
    gatewayUrl: `http://127.0.0.1:${addresses.gateway.port}`,
    async stats(filter) {
      const query = filter ? `&filter=${encodeURIComponent(filter)}` : '';
      const response = await fetch(`${adminUrl}/stats?format=json${query}`);
      const body = (await response.json()) as { stats: { name?: string; value?: number }[] };
      return new Map(
        body.stats
          .filter((stat) => stat.name !== undefined)
          .map((stat) => [stat.name!, Number(stat.value ?? 0)]),
      );
    },
    log: () => output,
    running: () => child.exitCode === null && child.signalCode === null,
    async stop() {
      await stopProcess(child, 5000);
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** What the real Envoy says of a bootstrap in `--mode validate` ("configuration '…' OK" when it accepts it). */
export async function envoyValidates(yaml: string, name = 'envoy.yaml'): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-validate-'));
  const file = path.join(directory, name);
  await writeFile(file, yaml);
  try {
    const child = spawn(findEnvoy(), [
      '--mode',
      'validate',
      '-c',
      file,
      '--disable-hot-restart',
      '-l',
      'error',
    ]);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`envoy --mode validate exited with ${code}:\n${output}`);
    return output;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
