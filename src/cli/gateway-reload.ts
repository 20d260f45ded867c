import { ConfigError } from '../config/config-error.js';
import { bootstrapObject, renderBootstrap, transitionBootstrap } from '../config/envoy.js';
import { compileGateway, GatewayLoadError } from '../config/gateway.js';
import { type LoadedConfig, loadConfigText } from '../config/load.js';
import { type BoundPorts, planRuntime, type RuntimePlan, withBoundPorts } from '../config/plan.js';
import type { GatewayConfig } from '../config/schema.js';
import {
  changedFiles,
  type FileTexts,
  readConfigFiles,
  replaceFiles,
  restoreFiles,
  runningSnapshot,
  withRunningTlsFiles,
  writeRunningSnapshot,
} from '../config/snapshot.js';
import { FileSetWatcher, referencedFiles } from '../config/watch.js';
import { certificateTables } from '../engine/certificates.js';
import { type DynamicGateway, dynamicGateway } from '../envoy/bootstrap/dynamic-resources.js';
import type { Bootstrap } from '../envoy/config-types.js';
import { type Logger, processLogger } from '../log.js';
import type {
  ChangeOutcome,
  ChangeProgress,
  ManagedConfiguration,
  RunningConfiguration,
} from '../management/store.js';
import { changesInPlace, directoryOf, EnvoyFiles } from './envoy-files.js';
import { EnvoyRejected } from './envoy-resources.js';
import type { EnvoyAddresses, EnvoyFamily } from './hot-restart.js';
import type { Supervisor } from './supervisor.js';

/** How long a child may take to load (and compile) the configuration again, unless the options say otherwise. */
const defaultChildReloadTimeoutMs = 15_000;

/** The Koa service's name under `up`. */
export const SERVICE = 'service';

/**
 * What a reload needs of the supervisor: SIGHUP to a child, and the reload reports children send over IPC
 * (child-report.ts) when they have taken it into account, either way.
 */
export type ReloadableChildren = Pick<Supervisor, 'signal' | 'onReloadReport'>;

/** What a reload needs of the Envoys: check a bootstrap, change the resources of the one serving, hot-restart. */
export type RestartableEnvoys = Pick<
  EnvoyFamily,
  'validate' | 'start' | 'publish' | 'previousGone' | 'currentEpoch'
>;

export interface GatewayReloadOptions {
  /** The configuration file `up` runs (absolute): watched, read again on a reload, written by a management change. */
  readonly configFile: string;
  /** `up`'s private state directory: the bootstrap of each Envoy epoch is written there. */
  readonly stateDirectory: string;
  /** Signals the engines and the service to reload, and hears their answers. */
  readonly children: ReloadableChildren;
  /** The Envoys serving the gateway: hot-restarted when a change alters the bootstrap. */
  readonly envoys: RestartableEnvoys;
  /**
   * The engines' names under the supervisor, or what gives them at each reload (a warm spare standing by reloads
   * too, see warm-spare.ts). The service is `SERVICE`.
   */
  readonly engines: readonly string[] | (() => readonly string[]);
  /** The plan `up` starts with (ports left to the system are 0 until `adopt` is given the bound ones). */
  readonly plan: RuntimePlan;
  /** The texts of the configuration's files that run: a reload from disk that finds them unchanged does nothing. */
  readonly texts: FileTexts;
  /** The running configuration's snapshot, which the children start from and load again on SIGHUP. */
  readonly snapshotFile: string;
  /** The snapshot's text as it runs now: written back when a change fails after it was replaced. */
  readonly snapshot: string;
  /**
   * How long a child may take to answer a reload (15 s unless given); one that does not is reported and the reload
   * goes on without it.
   */
  readonly childReloadTimeoutMs?: number;
  /** Where up says what each reload did (the process's log unless given). */
  readonly logger?: Logger;
}

interface Running {
  readonly texts: FileTexts;
  /** What `runningSnapshot` made of it: what a child of `up` starts (and reloads) from. Envoy's TLS files are in `plan`. */
  readonly snapshot: string;
  readonly config: GatewayConfig;
  readonly plan: RuntimePlan;
  /** The whole bootstrap, every resource static: what is validated and compared. */
  readonly bootstrap: Bootstrap;
  readonly text: string;
  /** What the serving Envoy runs: its bootstrap and the resource files it watches. */
  readonly published: DynamicGateway;
  readonly generation: number;
}

/**
 * Applies a changed configuration to the running gateway without restarting it — from the watched files, SIGHUP,
 * or the management API. The engines reload on SIGHUP (each swaps its pipelines; requests in flight finish on the
 * old ones). Envoy takes its listeners, routes and clusters from files it watches (dynamic-resources.ts): a change
 * to them is written there and Envoy applies it in place, its connections and streams untouched; Envoy is
 * hot-restarted only when what stays in its bootstrap changes (the admin listener, the runtime, the overload
 * manager) or a listener of the running Envoy has a port the system chose. Either way the order keeps every
 * request on a route that some policy guards and a cluster that exists: first only the routes both configurations
 * have and the clusters of both; then the engines (after a hot restart, once the Envoy before has drained and
 * exited); then exactly the new resources. A configuration that does not load, compile or validate, or that Envoy
 * rejects, is refused whole with the reason, and a management change that fails at any step is written back as it
 * was.
 *
 * The engines and the service never read the configuration's files themselves: they load the snapshot of the running
 * configuration (`snapshotFile`), which follows a change that runs and stays as it is when one is refused; Envoy's
 * bootstraps name up's copies of the certificates that run. So a child restarted after a crash runs what the others
 * run, even while the files on disk hold an edit up refused.
 */
export class GatewayReload implements ManagedConfiguration {
  private readonly watcher = new FileSetWatcher(() => void this.reload(), 250);
  /** Reloads and changes run one at a time, in order. */
  private queue: Promise<unknown> = Promise.resolve();
  /** A reload from disk that is queued and not started yet: further file events join it. */
  private queuedReload: Promise<ChangeOutcome> | undefined;
  /** Whether the queued reload was asked for by SIGHUP. */
  private forceQueued = false;
  private closed = false;
  private current: Running;
  private readonly configFile: string;
  private readonly directory: string;
  private readonly children: ReloadableChildren;
  private readonly envoys: RestartableEnvoys;
  private readonly engines: () => readonly string[];
  private readonly snapshotFile: string;
  private readonly childReloadTimeoutMs: number;
  private readonly log: Logger;
  private readonly envoyFiles: EnvoyFiles;

  constructor(options: GatewayReloadOptions) {
    this.log = options.logger ?? processLogger;
    const { plan, texts, snapshot } = options;
    this.configFile = options.configFile;
    this.directory = options.stateDirectory;
    this.envoyFiles = new EnvoyFiles(options.stateDirectory);
    this.children = options.children;
    this.envoys = options.envoys;
    const engines = options.engines;
    this.engines = typeof engines === 'function' ? engines : () => engines;
    this.snapshotFile = options.snapshotFile;
    this.childReloadTimeoutMs = options.childReloadTimeoutMs ?? defaultChildReloadTimeoutMs;
    const bootstrap = bootstrapObject(plan);
    this.current = {
      texts,
      snapshot,
      config: plan.config,
      plan,
      bootstrap,
      text: renderBootstrap(bootstrap),
      // Until the first Envoy starts (startEnvoy writes its files).
      published: this.envoyFiles.initial(bootstrap),
      generation: 1,
    };
  }

  /**
   * What runs now that every process has bound its ports (the plan `up` started with left some to the system): the
   * ports a reload keeps and the bootstrap a restarted Envoy starts on.
   */
  adopt(plan: RuntimePlan): void {
    const bootstrap = bootstrapObject(plan);
    this.current = { ...this.current, plan, bootstrap, text: renderBootstrap(bootstrap) };
  }

  /**
   * Starts an Envoy on the bootstrap that runs — the first one, again after the serving Envoy died, or the next
   * epoch when a restarted child had to take another port (`moved`) — in turn with reloads, so it never races a
   * hot restart. Resolves with the plan that runs then (the ports Envoy bound put in); rejects when it does not
   * come up.
   */
  startEnvoy(moved?: BoundPorts): Promise<RuntimePlan> {
    const started = this.queue.then(async () => {
      if (this.closed) throw new Error('the gateway is stopping');
      if (moved) this.adopt(withBoundPorts(this.current.plan, moved));
      const next = await this.envoyFiles.prepare(this.current.bootstrap);
      const envoy = await this.envoys.start(next.bootstrapFile);
      this.current = { ...this.current, published: next.published };
      this.adopt(withBoundPorts(this.current.plan, { envoy }));
      return this.current.plan;
    });
    this.queue = started.catch(() => {});
    return started;
  }

  async watch(): Promise<void> {
    this.watcher.watch(await this.filesToWatch());
  }

  /**
   * The files of the configuration on disk and of the one running. A configuration file that does not parse names
   * no other file: watching only what the disk names would then miss an edit to a running policy made meanwhile,
   * while the configuration is being fixed — or made just after the fix, before its reload has watched again.
   */
  private async filesToWatch(): Promise<string[]> {
    const onDisk = await referencedFiles(this.configFile);
    const running = await referencedFiles(this.configFile, this.current.texts.get(this.configFile) ?? '');
    return [...new Set([...onDisk, ...running])].sort();
  }

  close(): void {
    this.closed = true;
    this.watcher.close();
  }

  /** The plan that runs: the ports every process has now (a restarted child is given the same). */
  runningPlan(): RuntimePlan {
    return this.current.plan;
  }

  running(): RunningConfiguration {
    return {
      file: this.configFile,
      texts: this.current.texts,
      config: this.current.plan.config,
      generation: this.current.generation,
    };
  }

  /**
   * Applies the files as they are on disk now, unless they are what runs already. `force` (SIGHUP) applies them
   * anyway: the files a configuration names beyond its policies (a CA bundle, a certificate) are read again.
   */
  reload(force = false): Promise<ChangeOutcome> {
    this.forceQueued ||= force;
    if (this.queuedReload) return this.queuedReload;
    const reload = this.enqueue(async () => {
      this.queuedReload = undefined;
      const forced = this.forceQueued;
      this.forceQueued = false;
      const texts = await readConfigFiles(this.configFile).catch(() => undefined);
      if (!texts) {
        this.log.error(`cannot read ${this.configFile}; the running configuration stays`);
        return refused(400, `cannot read ${this.configFile}`, []);
      }
      // An editor saving the same text, or the files a management change just wrote.
      if (!forced && changedFiles(texts, this.current.texts).length === 0) return this.unchanged();
      return this.apply(texts);
    });
    this.queuedReload = reload;
    return reload;
  }

  change(files: FileTexts, basedOn?: number, progress?: ChangeProgress): Promise<ChangeOutcome> {
    return this.enqueue(async () => {
      if (basedOn !== undefined && basedOn !== this.current.generation) {
        return refused(
          409,
          'the configuration changed while this change was prepared; read it again and retry',
          [],
        );
      }
      const disk = await readConfigFiles(this.configFile).catch(() => undefined);
      const differing = disk ? changedFiles(disk, this.current.texts) : [this.configFile];
      if (differing.length > 0) {
        return refused(
          409,
          'the configuration files on disk are not the ones running (a change there was refused or is being applied); fix or revert them, then try again',
          differing.map((file) => `${file}: differs from the running configuration`),
        );
      }
      const candidate = new Map(this.current.texts);
      for (const [file, text] of files) candidate.set(file, text);
      return this.apply(candidate, files, progress);
    });
  }

  private enqueue(task: () => Promise<ChangeOutcome>): Promise<ChangeOutcome> {
    const run = this.queue.then(async () => {
      if (this.closed) return refused(503, 'the gateway is stopping', []);
      try {
        return await task();
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        this.log.error(`reload failed: ${message}`);
        return refused(503, 'the change could not be applied; the running configuration stays', []);
      } finally {
        if (!this.closed) this.watcher.watch(await this.filesToWatch());
      }
    });
    this.queue = run;
    return run;
  }

  private unchanged(): ChangeOutcome {
    return { ok: true, generation: this.current.generation };
  }

  /**
   * Validates `texts` (the configuration's file and its policy documents) and makes them run. `write`: the files
   * to write first (a management change); on any failure they are put back as they were.
   */
  private async apply(
    texts: FileTexts,
    write?: FileTexts,
    progress?: ChangeProgress,
  ): Promise<ChangeOutcome> {
    let loaded: LoadedConfig;
    try {
      loaded = await loadConfigText(texts.get(this.configFile) ?? '', this.configFile, texts);
      // As the engines will load it: its policies, and the certificates a backend or a policy uses.
      await certificateTables(loaded, compileGateway(loaded));
    } catch (error) {
      if (!(error instanceof ConfigError || error instanceof GatewayLoadError)) throw error;
      this.log.error(`configuration refused, nothing changed:\n${error.message}`);
      return refused(400, 'the configuration is invalid; nothing changed', error.message.split('\n'));
    }
    const { config, directory: configDirectory } = loaded;
    // Taken now, from what was validated (and the certificates as they are now): what the children will load.
    const snapshot = await runningSnapshot(loaded);
    const fixed: string[] = (['engine', 'service', 'processes'] as const).filter(
      (key) => JSON.stringify(config[key]) !== JSON.stringify(this.current.config[key]),
    );
    if (!sameManagementAddresses(config, this.current.config)) fixed.push('management (addresses)');
    if (fixed.length > 0)
      this.log.warn(`changes to ${fixed.join(', ')} take effect when up starts again; applying the rest`);
    let plan = await withRunningTlsFiles(
      await planRuntime(keepRunningPorts(config, this.current.config, this.current.plan), {
        directory: configDirectory,
      }),
      snapshot,
      this.directory,
    );
    let bootstrap = bootstrapObject(plan);
    let text = renderBootstrap(bootstrap);
    if (this.closed) return refused(503, 'the gateway is stopping', []);

    const changed = text !== this.current.text;
    if (changed) {
      const invalid = await this.envoys.validate(await this.envoyFiles.validation(text));
      if (invalid) {
        await this.envoyFiles.discardValidation();
        this.log.error(`configuration refused, nothing changed: Envoy rejects the bootstrap:\n${invalid}`);
        return refused(400, 'Envoy rejects the bootstrap of this configuration; nothing changed', [invalid]);
      }
    }
    const running = this.current.published;
    const inPlace = changed && changesInPlace(running, bootstrap);
    // Only a new Envoy starts from the directory the bootstrap was validated in.
    if (inPlace) await this.envoyFiles.discardValidation();

    // Before any child reloads; a child restarted from now on starts on the new configuration too.
    await writeRunningSnapshot(this.snapshotFile, snapshot.text);
    const previous = write
      ? await replaceFiles(write).catch(async (error: unknown) => {
          await writeRunningSnapshot(this.snapshotFile, this.current.snapshot);
          throw error;
        })
      : undefined;
    // What has been done so far, for putting it back.
    const steps = { enginesReloaded: false };
    let published = running;
    try {
      if (!changed) {
        await this.reloadEngines();
        steps.enginesReloaded = true;
      } else if (inPlace) {
        // The running Envoy takes the resources both configurations need, the engines switch, then it takes
        // exactly the new ones; listeners the change leaves alone keep their connections.
        const directory = directoryOf(running);
        await this.envoys.publish(
          dynamicGateway(transitionBootstrap(this.current.bootstrap, bootstrap), directory).resources,
        );
        await this.reloadEngines();
        steps.enginesReloaded = true;
        published = dynamicGateway(bootstrap, directory);
        const envoy = await this.envoys.publish(published.resources);
        plan = withBoundPorts(plan, { envoy });
      } else {
        progress?.restarting?.();
        const restarted = await this.restartEnvoy(bootstrap, text, steps);
        published = restarted.published;
        // A listener the new configuration leaves to the system (0) keeps the port it got from now on.
        plan = withBoundPorts(plan, { envoy: restarted.envoy });
      }
      bootstrap = bootstrapObject(plan);
      text = renderBootstrap(bootstrap);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const rejected = error instanceof EnvoyRejected;
      this.log.error(
        rejected
          ? `configuration refused, the running one stays: ${message}`
          : `Envoy could not take the new configuration, the running one stays: ${message}`,
      );
      // Envoy back onto the resources that run (a hot restart that failed left the previous epoch serving them).
      if (inPlace)
        await this.envoys.publish(running.resources).catch((restoring: unknown) => {
          this.log.error(`could not put Envoy's running resources back: ${String(restoring)}`);
        });
      if (previous) await restoreFiles(previous);
      await writeRunningSnapshot(this.snapshotFile, this.current.snapshot);
      // Put the engines back on the configuration that runs.
      if (steps.enginesReloaded) await this.reloadEngines();
      return rejected
        ? refused(400, 'Envoy rejects this configuration; the running configuration stays', [message])
        : refused(
            503,
            inPlace
              ? 'Envoy did not take this configuration; nothing changed'
              : 'Envoy could not start with this configuration; nothing changed',
            [message],
          );
    }
    // The service last, once every route of the new configuration is served: a tool it now lists can be called.
    // It reads the same files; a configuration it cannot serve leaves it on its catalog (it says why).
    await this.reloadChildren([SERVICE]);
    const generation = this.current.generation + 1;
    // What runs now, read back so the snapshot also covers files the change made the configuration reference.
    const runningTexts = write ? await readConfigFiles(this.configFile).catch(() => texts) : texts;
    this.current = {
      texts: runningTexts,
      snapshot: snapshot.text,
      config,
      plan,
      bootstrap,
      text,
      published,
      generation,
    };
    this.log.info(
      !changed
        ? 'configuration reloaded (policies; Envoy unchanged)'
        : inPlace
          ? 'configuration reloaded (Envoy updated in place)'
          : `configuration reloaded (Envoy hot-restarted, epoch ${this.envoys.currentEpoch()})`,
    );
    return { ok: true, generation };
  }

  /**
   * Hot-restarts Envoy onto `bootstrap` (whose rendering is `text`), the engines switching in between: first an
   * Envoy with the routes both configurations have and the clusters of both, and the engines only once no Envoy
   * without the new clusters serves any more (the previous epoch serves the connections it had while it drains).
   */
  private async restartEnvoy(
    bootstrap: Bootstrap,
    text: string,
    steps: { enginesReloaded: boolean },
  ): Promise<{ readonly envoy: EnvoyAddresses; readonly published: DynamicGateway }> {
    const transition = transitionBootstrap(this.current.bootstrap, bootstrap);
    if (renderBootstrap(transition) !== text) {
      await this.envoys.start((await this.envoyFiles.prepare(transition)).bootstrapFile);
      await this.envoys.previousGone();
      await this.reloadEngines();
      steps.enginesReloaded = true;
      const next = await this.envoyFiles.prepare(bootstrap);
      return { envoy: await this.envoys.start(next.bootstrapFile), published: next.published };
    }
    const next = await this.envoyFiles.prepare(bootstrap);
    const envoy = await this.envoys.start(next.bootstrapFile);
    await this.envoys.previousGone();
    await this.reloadEngines();
    steps.enginesReloaded = true;
    return { envoy, published: next.published };
  }

  private reloadEngines(): Promise<void> {
    return this.reloadChildren(this.engines());
  }

  /**
   * SIGHUP to each named child, then waits until each reported over IPC that it reloaded or refused (a refusing
   * child says why in its own log and keeps what it ran), or did not answer in time. A child that is not running
   * is not waited for.
   */
  private async reloadChildren(names: readonly string[]): Promise<void> {
    const waiting = new Set(names);
    let stopListening = () => {};
    const answered = new Promise<void>((resolve) => {
      stopListening = this.children.onReloadReport((name) => {
        if (!waiting.delete(name)) return;
        if (waiting.size === 0) resolve();
      });
    });
    for (const name of names) if (!this.children.signal(name, 'SIGHUP')) waiting.delete(name);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      waiting.size === 0 ? Promise.resolve() : answered,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.childReloadTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    stopListening();
    if (waiting.size > 0) this.log.warn(`${[...waiting].join(', ')} did not report a reload in time`);
  }
}

function refused(
  status: 400 | 409 | 503,
  message: string,
  problems: readonly string[],
): ChangeOutcome & { ok: false } {
  return { ok: false, status, message, problems };
}

/** The management API's own addresses are fixed while `up` runs (its administrators are not). */
function sameManagementAddresses(a: GatewayConfig, b: GatewayConfig): boolean {
  const addresses = (config: GatewayConfig) =>
    JSON.stringify([config.management?.listen, config.management?.server, config.management === undefined]);
  return addresses(a) === addresses(b);
}

/**
 * The new configuration with the ports the running processes have: engines, the service and the management server
 * are not restarted by a reload, and a port the configuration leaves to the system (0) keeps the one it got.
 */
function keepRunningPorts(config: GatewayConfig, running: GatewayConfig, plan: RuntimePlan): GatewayConfig {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const managementListener = plan.listeners?.find((listener) => listener.role === 'management');
  const httpsListener = plan.listeners?.find((listener) => listener.role === 'https');
  return {
    ...config,
    ...(config.tls && httpsListener && config.tls.port === running.tls?.port
      ? { tls: { ...config.tls, port: httpsListener.address.port } }
      : {}),
    engine: { ...config.engine, host: running.engine.host, ports: plan.engine.endpoints.map((e) => e.port) },
    service: { ...config.service, host: plan.service.host, port: plan.service.port },
    admin: same(config.admin, running.admin) ? plan.admin : config.admin,
    gateway: same(config.gateway, running.gateway)
      ? { ...config.gateway, http: { ...config.gateway.http, port: plan.gateway.port } }
      : config.gateway,
    // The management API is added or removed only by a restart: keep what runs, with the new administrators.
    ...(running.management && plan.management
      ? {
          management: {
            ...running.management,
            ...(managementListener && config.network.mode === 'none'
              ? { listen: managementListener.address }
              : {}),
            server: plan.management,
            administrators: config.management?.administrators ?? running.management.administrators,
          },
        }
      : { management: running.management }),
  };
}
