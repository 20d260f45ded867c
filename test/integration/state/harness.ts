import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfigFile } from '../../../src/config/load.js';
import { freePort } from '../../../src/config/plan.js';
import { type RunningEnvoy, startEnvoy } from '../../processes/envoy.js';
import { until } from '../../processes/wait.js';

const BIN = fileURLToPath(new URL('../../../bin/portcullis.js', import.meta.url));

export interface EngineProcess {
  readonly port: number;
  /** The engine's Prometheus endpoint (`--metrics-port`): `http://127.0.0.1:<port>/metrics`. */
  readonly metricsUrl: string;
  /** Everything the process wrote so far (access log lines, warnings). */
  output(): string;
  /** Access-log lines (one per request this engine ran). */
  requests(): number;
  stop(): Promise<void>;
}

export interface SharedStateStack {
  readonly url: string;
  readonly envoy: RunningEnvoy;
  readonly engines: readonly EngineProcess[];
  /** The gateway YAML the engines run (beside it: the `files`, and a relative state.dataDir). */
  readonly configFile: string;
  /** Stops engine `index` (SIGTERM, as a restart does) and starts a new process on its port in its place. */
  restartEngine(index: number): Promise<void>;
  stop(): Promise<void>;
}

async function startEngineProcess(configFile: string, enginePort?: number): Promise<EngineProcess> {
  const port = enginePort ?? (await freePort());
  const metricsPort = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, 'engine', '--config', configFile, '--port', String(port), '--metrics-port', String(metricsPort)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await until(
      () => {
        if (child.exitCode !== null) throw new Error(`engine exited with ${child.exitCode}:\n${output}`);
        return output.includes('engine listening');
      },
      'the engine to listen',
      { timeoutMs: 20_000, everyMs: 25, detail: () => output },
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    port,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    output: () => output,
    requests: () => output.split('\n').filter((line) => line.includes('"message":"request"')).length,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      // The engine drains for up to 5 s; a process that has not left after that is killed.
      const timer = setTimeout(() => child.kill('SIGKILL'), 7000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * A real Envoy in front of `engines` engine processes (`portcullis engine --config FILE --port N`), all
 * configured by the same gateway YAML (whose `state.redis` points them at one Redis). `files` are written beside
 * the configuration.
 */
export async function startSharedStateStack(
  configYaml: string,
  files: Record<string, string> = {},
  engines = 2,
): Promise<SharedStateStack> {
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-state-'));
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(directory, name), text);
  const file = path.join(directory, 'gateway.yaml');
  await writeFile(file, configYaml);
  const loaded = await loadConfigFile(file);
  const processes = await Promise.all(Array.from({ length: engines }, () => startEngineProcess(file)));
  const envoy = await startEnvoy({
    gateway: { host: '127.0.0.1', port: await freePort() },
    admin: { host: '127.0.0.1', port: await freePort() },
    engine: {
      endpoints: processes.map((engine) => ({ host: '127.0.0.1', port: engine.port })),
      messageTimeoutMs: 2000,
    },
    service: { host: '127.0.0.1', port: await freePort() },
    apis: loaded.config.apis,
    backends: loaded.config.backends,
  });
  return {
    url: envoy.gatewayUrl,
    envoy,
    engines: processes,
    configFile: file,
    async restartEngine(index) {
      const engine = processes[index]!;
      await engine.stop();
      processes[index] = await startEngineProcess(file, engine.port);
    },
    async stop() {
      await envoy.stop();
      await Promise.all(processes.map((engine) => engine.stop()));
      await rm(directory, { recursive: true, force: true });
    },
  };
}
