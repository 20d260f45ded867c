import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { compileGateway } from '../../config/gateway.js';
import { type LoadedConfig, loadConfigText } from '../../config/load.js';
import { type BoundPorts, planRuntime, type RuntimePlan, withBoundPorts } from '../../config/plan.js';
import type { CompanionProcessConfig } from '../../config/schema.js';
import {
  type FileTexts,
  readConfigFiles,
  runningSnapshot,
  type Snapshot,
  withRunningTlsFiles,
  writeRunningSnapshot,
} from '../../config/snapshot.js';
import { certificateTables } from '../../engine/certificates.js';
import { findEnvoy } from '../../envoy/binary.js';
import { listenersOf } from '../../envoy/bootstrap/plan.js';
import { checkEngineHealth } from '../../extproc/health-client.js';
import { logProcessTo, processLogger } from '../../log.js';
import { createManagementApp, type ManagementServer, serveManagement } from '../../management/index.js';
import { packageRoot } from '../../package-root.js';
import type { GatewayUrlMessage } from '../child-report.js';
import { type CliCommand, InputError, UsageError } from '../command.js';
import { EnvoyRejections } from '../envoy-resources.js';
import { GatewayReload, SERVICE } from '../gateway-reload.js';
import { EnvoyFamily } from '../hot-restart.js';
import { chosenLogFormat, type LogView, logFormats, logView } from '../log-view.js';
import { nodeFlags } from '../node-flags.js';
import { waitForStopSignal } from '../signals.js';
import {
  type ChildSpec,
  type GaveUp,
  httpReady,
  pollUntil,
  type StartedChild,
  Supervisor,
} from '../supervisor.js';
import { WarmSpare, wantsWarmSpare } from '../warm-spare.js';

/** A wildcard listen address is reached on loopback. */
function connectableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

const cliEntry = path.join(packageRoot, 'bin', 'portcullis.js');

export const command: CliCommand = {
  usage:
    'portcullis up --config FILE [--log-format pretty|json]   (the processes\' log lines: pretty, "[engine] 12:00:01 INFO  message key=value", at a terminal; json, each process\'s JSON lines with "process" added, elsewhere)',
  async run(args) {
    const { values } = parseArgs({
      args: [...args],
      options: { config: { type: 'string' }, 'log-format': { type: 'string' } },
    });
    if (!values.config) throw new UsageError('--config is required');
    const logFormat = chosenLogFormat(values['log-format'], process.stdout.isTTY === true);
    if (logFormat === undefined)
      throw new UsageError(
        `--log-format must be one of ${logFormats.join(', ')}, got "${values['log-format']}"`,
      );
    // Up's own lines (and the management API's, which runs here) are shown like its children's.
    const view = logView(logFormat, (text) => process.stdout.write(text));
    logProcessTo({ write: (line: string) => view('up', line.trimEnd()) });
    const configFile = path.resolve(values.config);
    // What runs is what was validated: the texts read now are the running configuration's.
    const texts = await readConfigFiles(configFile).catch((error: NodeJS.ErrnoException) => {
      throw new InputError(`cannot read ${values.config} (${error.code ?? error.message})`);
    });
    const loaded = await loadConfigText(texts.get(configFile)!, configFile, texts);
    // Policy errors, and a certificate a backend or a policy uses that cannot be read, are reported now, before
    // anything starts (each engine compiles the same documents and reads the same certificates again).
    await certificateTables(loaded, compileGateway(loaded));
    const envoyBinary = findEnvoy();
    const prepared = await prepareRunningState(loaded);
    const up = await UpSession.create(configFile, texts, loaded, envoyBinary, prepared, view);
    if (!(await up.start())) return 1;
    // Before saying so: an edit saved as soon as up says it is up is seen.
    await up.gateway.watch();
    printWhereItRuns(loaded, up.plan);
    const outcome = await up.superviseUntilStopped();
    await up.stopEverything();
    if (outcome) {
      processLogger.error(`${keepsDying(outcome)}; stopped everything else.`);
      return 1;
    }
    processLogger.info('stopped.');
    return 0;
  },
};

export interface RunningState {
  /**
   * The bootstraps of every epoch, the running configuration's snapshot and Envoy's copies of the certificates
   * that run are written here (only we can read it).
   */
  readonly stateDirectory: string;
  /** What the engines and the service start from, and load again when told to reload: the configuration that runs. */
  readonly snapshotFile: string;
  readonly snapshot: Snapshot;
  readonly plan: RuntimePlan;
}

/**
 * Writes the running configuration's snapshot and plans the ports. Relative TLS files and the development
 * certificate live beside the configuration. Ports left to the system (0) stay 0 in this plan: each process binds
 * its own and the plan takes what they report.
 */
export async function prepareRunningState(loaded: LoadedConfig): Promise<RunningState> {
  const stateDirectory = await mkdtemp(path.join(tmpdir(), 'portcullis-up-'));
  const snapshotFile = path.join(stateDirectory, 'running.json');
  return (async () => {
    const snapshot = await runningSnapshot(loaded);
    await writeRunningSnapshot(snapshotFile, snapshot.text);
    const plan = await planRuntime(loaded.config, { directory: loaded.directory });
    return {
      stateDirectory,
      snapshotFile,
      snapshot,
      plan: await withRunningTlsFiles(plan, snapshot, stateDirectory),
    };
  })().catch(async (error: unknown) => {
    // It may hold private keys already.
    await rm(stateDirectory, { recursive: true, force: true });
    throw error;
  });
}

/** One `up`: the children it supervises, the ports they bound and the plan Envoy runs with. */
class UpSession {
  /** The ports the engines and the service bound: a restarted one binds the same, which Envoy is configured with. */
  readonly bound: { engines: number[]; service?: number; management?: number } = { engines: [] };
  management: ManagementServer | undefined;
  readonly #keptDying: Promise<never>;

  private constructor(
    readonly loaded: LoadedConfig,
    readonly stateDirectory: string,
    readonly snapshotFile: string,
    public plan: RuntimePlan,
    readonly supervisor: Supervisor,
    readonly envoys: EnvoyFamily,
    readonly engineNames: string[],
    readonly gaveUp: Promise<GaveUp>,
    readonly stopSignal: Promise<unknown>,
    readonly gateway: GatewayReload,
    /** The engine kept ready to take a dead engine's place (`engine.warmSpare`), if any. */
    readonly spare: WarmSpare | undefined,
  ) {
    // A child that keeps dying while later ones are still starting ends the start-up.
    this.#keptDying = gaveUp.then((giving) => {
      throw new Error(keepsDying(giving));
    });
    this.#keptDying.catch(() => {});
  }

  static async create(
    configFile: string,
    texts: FileTexts,
    loaded: LoadedConfig,
    envoyBinary: string,
    { stateDirectory, snapshotFile, snapshot, plan }: RunningState,
    view: LogView,
  ): Promise<UpSession> {
    // Envoy says in its log why it refused a resource file: a reload reports that reason (envoy-resources.ts).
    const rejections = new EnvoyRejections();
    const supervisor = new Supervisor((name, line) => {
      if (name === 'envoy' || name.startsWith('envoy#')) rejections.hear(line);
      view(name, line);
    });
    const envoys = await EnvoyFamily.create(supervisor, envoyBinary, loaded.config.envoy, rejections);
    const engineNames = plan.engine.endpoints.map((_, index) =>
      plan.engine.endpoints.length > 1 ? `engine-${index + 1}` : 'engine',
    );
    const gaveUp = new Promise<GaveUp>((resolve) => supervisor.onGiveUp(resolve));
    const stopSignal = waitForStopSignal();
    const spare = wantsWarmSpare(loaded.config.engine)
      ? new WarmSpare(supervisor, {
          command: process.execPath,
          // What an engine loads, on the engines' host; its port is the dead engine's, given when it takes over.
          args: [
            ...nodeFlags,
            cliEntry,
            'engine',
            '--supervised',
            '--standby',
            '--snapshot',
            snapshotFile,
            '--host',
            plan.engine.endpoints[0]!.host,
          ],
        })
      : undefined;
    const gateway = new GatewayReload({
      configFile,
      stateDirectory,
      children: supervisor,
      envoys,
      // The spare standing by follows each reload like the engines, so it takes over on what runs.
      engines: () => [...engineNames, ...(spare?.reloadable() ?? [])],
      plan,
      texts,
      snapshotFile,
      snapshot: snapshot.text,
    });
    envoys.restartWith(() => gateway.startEnvoy());
    return new UpSession(
      loaded,
      stateDirectory,
      snapshotFile,
      plan,
      supervisor,
      envoys,
      engineNames,
      gaveUp,
      stopSignal,
      gateway,
      spare,
    );
  }

  #during<T>(step: Promise<T>): Promise<T> {
    return Promise.race([step, this.#keptDying]);
  }

  /** What the gateway listener has now (a reload may have moved it since start-up). */
  gatewayUrl(): string {
    const listener = this.gateway.runningPlan().gateway;
    return `http://${connectableHost(listener.host)}:${listener.port}`;
  }

  /**
   * Starts the companions, the engines, the service, the management API and Envoy, in that order. False when
   * one did not start: the reason is printed and everything already started is stopped.
   */
  async start(): Promise<boolean> {
    try {
      await this.#startChildren();
      await this.#startManagement();
      await this.#startEnvoy();
      // In the background, once the gateway serves: its start does not delay "Portcullis is up".
      this.spare?.start();
      return true;
    } catch (error) {
      processLogger.error(error instanceof Error ? error.message : String(error));
      await this.stopEverything();
      return false;
    }
  }

  async #startChildren(): Promise<void> {
    for (const companion of this.loaded.config.processes)
      await this.#during(this.supervisor.start(this.#companionSpec(companion)));
    for (const [index, endpoint] of this.plan.engine.endpoints.entries()) {
      const started = await this.#during(this.supervisor.start(this.#engineSpec(index, endpoint.port)));
      this.bound.engines[index] = started.port!;
    }
    const gatewayPortKnown = this.plan.gateway.port !== 0;
    this.bound.service = (
      await this.#during(
        this.supervisor.start(
          this.#serviceSpec(this.plan.service.port, gatewayPortKnown ? this.gatewayUrl() : undefined),
        ),
      )
    ).port!;
  }

  async #startManagement(): Promise<void> {
    if (!this.plan.management) return;
    this.management = await serveManagement(
      createManagementApp({ store: this.gateway, restarts: () => this.supervisor.restartCounts() }),
      this.plan.management,
    );
    this.bound.management = this.management.port;
  }

  /** Envoy starts last, configured with the ports every other process bound. */
  async #startEnvoy(): Promise<void> {
    const portless = this.plan;
    const gatewayPortKnown = portless.gateway.port !== 0;
    this.plan = withBoundPorts(this.plan, this.bound);
    this.gateway.adopt(this.plan);
    this.plan = await this.#during(this.gateway.startEnvoy());
    // The management listener reaches Envoy's own admin through a cluster: with the admin port left to the system
    // the first Envoy's cluster could not name it; the next epoch, which takes the listeners over, does.
    if (
      portless.admin.port === 0 &&
      listenersOf(this.plan).some((listener) => listener.role === 'management')
    )
      this.plan = await this.#during(this.gateway.startEnvoy());
    if (!gatewayPortKnown) {
      this.supervisor.send(SERVICE, {
        kind: 'gateway-url',
        url: this.gatewayUrl(),
      } satisfies GatewayUrlMessage);
      await this.#during(
        serviceHealthy(this.plan.service.host, this.bound.service!, AbortSignal.timeout(30_000)),
      );
    }
  }

  /** Reloads on SIGHUP until Ctrl-C (undefined) or until a child keeps dying (which one). */
  async superviseUntilStopped(): Promise<GaveUp | undefined> {
    const reloadOnHangup = () => void this.gateway.reload(true);
    process.on('SIGHUP', reloadOnHangup);
    const outcome = await Promise.race([this.stopSignal.then(() => undefined), this.gaveUp]);
    process.off('SIGHUP', reloadOnHangup);
    this.gateway.close();
    return outcome;
  }

  async stopEverything(): Promise<void> {
    // First, so that no child is restarted (and no spare started) while the others stop.
    this.spare?.close();
    await this.supervisor.stopAll();
    await this.management?.close();
    await this.envoys.cleanUp();
    await rm(this.stateDirectory, { recursive: true, force: true });
  }

  /**
   * Starts a dead child again on the port Envoy knows it by. Nothing may depend on that port staying free: when the
   * child cannot start there, it starts on any port, and Envoy's next epoch is given the one it got.
   */
  async #restartOnItsPort(
    name: string,
    port: number,
    start: (port: number) => Promise<StartedChild>,
    moved: (port: number) => BoundPorts,
  ): Promise<void> {
    try {
      await start(port);
      return;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      processLogger.warn(`${name} did not start on port ${port} again (${message}); trying any free port`);
    }
    const started = await start(0);
    if (started.port === port) return;
    try {
      await this.gateway.startEnvoy(moved(started.port!));
      processLogger.info(
        `${name} moved to port ${started.port}; Envoy follows (epoch ${this.envoys.currentEpoch()})`,
      );
    } catch (error) {
      // The child runs; the next reload or Envoy restart takes its port from the plan, which has it.
      const message = error instanceof Error ? error.message : String(error);
      processLogger.error(
        `${name} moved to port ${started.port}, but Envoy could not follow yet: ${message}`,
      );
    }
  }

  #companionSpec(companion: CompanionProcessConfig): ChildSpec {
    const [program, ...rest] = companion.command;
    return {
      name: companion.name,
      command: program === 'node' ? process.execPath : program!,
      args: rest,
      cwd: path.resolve(this.loaded.directory, companion.cwd ?? '.'),
      env: { ...process.env, ...companion.env },
      ready: companion.readyUrl ? httpReady(companion.readyUrl) : async () => {},
      restart: () => this.supervisor.start(this.#companionSpec(companion)),
    };
  }

  #engineSpec(index: number, port: number): ChildSpec {
    const host = this.plan.engine.endpoints[index]!.host;
    const metricsPort = this.loaded.config.engine.metricsPort;
    return {
      name: this.engineNames[index]!,
      command: process.execPath,
      ipc: true,
      args: [
        ...nodeFlags,
        cliEntry,
        'engine',
        '--supervised',
        // Not the configuration's files: what runs, even when an edit on disk was refused. `up` watches the files
        // and tells the engines when to reload (SIGHUP), in step with Envoy (see GatewayReload).
        '--snapshot',
        this.snapshotFile,
        '--host',
        host,
        '--port',
        String(port),
        // Each engine process gets its own metrics port: the configured one, then the next ones.
        ...(metricsPort === undefined ? [] : ['--metrics-port', String(metricsPort + index)]),
      ],
      ready: async (signal, child) => {
        const port = await child.port;
        await pollUntil(() => checkEngineHealth(host, port), signal);
      },
      // The spare listens on the port Envoy knows this engine by, at once; when it cannot, `restart` follows.
      standIn: () => {
        const port = this.bound.engines[index]!;
        return this.spare?.takeOver(
          this.#engineSpec(index, port),
          port,
          metricsPort === undefined ? undefined : metricsPort + index,
        );
      },
      restart: () =>
        this.#restartOnItsPort(
          this.engineNames[index]!,
          this.bound.engines[index]!,
          async (port) => {
            const started = await this.supervisor.start(this.#engineSpec(index, port));
            this.bound.engines[index] = started.port!;
            return started;
          },
          () => ({ engines: this.bound.engines }),
        ),
    };
  }

  // Until Envoy runs, a gateway port left to the system is not known: the service then waits for it over IPC and
  // is ready, for now, once it reported its own port.
  #serviceSpec(port: number, gateway: string | undefined): ChildSpec {
    return {
      name: SERVICE,
      command: process.execPath,
      ipc: true,
      args: [
        ...nodeFlags,
        cliEntry,
        'service',
        '--supervised',
        // What runs, like the engines.
        '--snapshot',
        this.snapshotFile,
        '--host',
        this.plan.service.host,
        '--port',
        String(port),
        // Tool calls of the MCP endpoint go through the gateway listener, so the APIs' policies apply.
        ...(gateway === undefined ? ['--await-gateway-url'] : ['--gateway-url', gateway]),
        ...(this.loaded.config.service.metricsPort === undefined
          ? []
          : ['--metrics-port', String(this.loaded.config.service.metricsPort)]),
      ],
      ready: async (signal, child) => {
        const port = await child.port;
        if (gateway !== undefined) await serviceHealthy(this.plan.service.host, port, signal);
      },
      restart: () =>
        this.#restartOnItsPort(
          SERVICE,
          this.bound.service!,
          async (port) => {
            const started = await this.supervisor.start(this.#serviceSpec(port, this.gatewayUrl()));
            this.bound.service = started.port!;
            return started;
          },
          (port) => ({ service: port }),
        ),
    };
  }
}

/** The addresses a user reaches the gateway at, printed once everything runs. */
function printWhereItRuns(loaded: LoadedConfig, plan: RuntimePlan): void {
  const gatewayHost = plan.gateway.host === '0.0.0.0' ? 'localhost' : plan.gateway.host;
  console.log(`\nPortcullis is up.`);
  console.log(`  gateway       http://${gatewayHost}:${plan.gateway.port}/`);
  for (const api of loaded.config.apis) {
    console.log(`  api ${api.id.padEnd(9)} http://${gatewayHost}:${plan.gateway.port}/${api.urlSuffix}/`);
  }
  for (const listener of plan.listeners ?? []) {
    if (listener.role === 'http' && listener.address.port === plan.gateway.port) continue;
    const tls = listener.role === 'https' || (listener.role === 'management' && plan.tls && plan.management);
    const scheme = tls ? 'https' : 'http';
    const host = listener.address.host === '0.0.0.0' ? 'localhost' : listener.address.host;
    console.log(`  ${listener.role.padEnd(13)} ${scheme}://${host}:${listener.address.port}/`);
  }
  console.log(
    `  envoy admin   http://${plan.admin.host}:${plan.admin.port}/  (stats: /stats?filter=ext_proc)`,
  );
  console.log(`Press Ctrl-C to stop.\n`);
}

function keepsDying(giving: GaveUp): string {
  return `${giving.family} keeps dying (${giving.deaths} times within ${giving.windowMs / 1000} s, last: ${giving.last})`;
}

/** The service answers its health check (it does once it is built, not while it waits for the gateway URL). */
async function serviceHealthy(host: string, port: number, signal: AbortSignal): Promise<void> {
  await httpReady(`http://${connectableHost(host)}:${port}/healthz`)(signal);
  if (signal.aborted) throw new Error(`the service was not healthy on port ${port} in time`);
}
