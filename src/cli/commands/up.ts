import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { findEnvoy } from '../../../envoy/binary.js';
import { bootstrapObject, renderBootstrap, transitionBootstrap, writeBootstrap } from '../../config/envoy.js';
import { compileGateway, GatewayLoadError } from '../../config/gateway.js';
import { ConfigError, loadConfigFile } from '../../config/load.js';
import { planRuntime, type RuntimePlan } from '../../config/plan.js';
import { FileSetWatcher, referencedFiles } from '../../config/reload.js';
import type { GatewayConfig } from '../../config/schema.js';
import { checkEngineHealth } from '../../extproc/health-client.js';
import { type CliCommand, UsageError } from '../command.js';
import { EnvoyFamily } from '../hot-restart.js';
import { waitForStopSignal } from '../signals.js';
import {
  type ChildExit,
  type ChildSpec,
  describeExit,
  httpReady,
  pollUntil,
  Supervisor,
} from '../supervisor.js';

/** A wildcard listen address is reached on loopback. */
function connectableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

const cliEntry = fileURLToPath(new URL('../../../bin/portcullis.js', import.meta.url));

export const command: CliCommand = {
  name: 'up',
  summary: 'start Envoy, the policy engine, the Koa service (and companion processes), stop them on Ctrl-C',
  usage: 'portcullis up --config FILE',
  async run(args) {
    const { values } = parseArgs({ args: [...args], options: { config: { type: 'string' } } });
    if (!values.config) throw new UsageError('--config is required');
    const loaded = await loadConfigFile(values.config);
    // Policy errors are reported now, before anything starts (each engine compiles the same documents again).
    compileGateway(loaded);
    const envoyBinary = findEnvoy();
    // Relative TLS files and the development certificate live beside the configuration.
    const plan = await planRuntime(loaded.config, { directory: loaded.directory });
    const bootstrap = await writeBootstrap(plan);
    const configFile = path.resolve(values.config);

    const supervisor = new Supervisor();
    const envoys = await EnvoyFamily.create(supervisor, envoyBinary, loaded.config.envoy);
    const engineNames = plan.engine.endpoints.map((_, index) =>
      plan.engine.endpoints.length > 1 ? `engine-${index + 1}` : 'engine',
    );
    const unexpectedExit = new Promise<ChildExit>((resolve) => supervisor.onUnexpectedExit(resolve));
    const stop = waitForStopSignal();
    // A child that dies while later ones are still starting ends the start-up at once.
    const diedDuringStart = unexpectedExit.then((exit) => {
      throw new Error(`${exit.name} stopped unexpectedly (${describeExit(exit)})`);
    });
    diedDuringStart.catch(() => {});
    const start = (spec: ChildSpec) => Promise.race([supervisor.start(spec), diedDuringStart]);

    try {
      for (const companion of loaded.config.processes) {
        const [program, ...rest] = companion.command;
        await start({
          name: companion.name,
          command: program === 'node' ? process.execPath : program!,
          args: rest,
          cwd: path.resolve(loaded.directory, companion.cwd ?? '.'),
          env: { ...process.env, ...companion.env },
          ready: companion.readyUrl ? httpReady(companion.readyUrl) : async () => {},
        });
      }
      for (const [index, endpoint] of plan.engine.endpoints.entries()) {
        await start({
          name: engineNames[index]!,
          command: process.execPath,
          args: [
            cliEntry,
            'engine',
            '--supervised',
            // `up` watches the files and tells the engines when to reload, in step with Envoy (see reloadGateway).
            '--no-watch',
            '--config',
            configFile,
            '--host',
            endpoint.host,
            '--port',
            String(endpoint.port),
            // Each engine process gets its own metrics port: the configured one, then the next ones.
            ...(loaded.config.engine.metricsPort === undefined
              ? []
              : ['--metrics-port', String(loaded.config.engine.metricsPort + index)]),
          ],
          ready: (signal) => pollUntil(() => checkEngineHealth(endpoint.host, endpoint.port), signal),
        });
      }
      await start({
        name: 'service',
        command: process.execPath,
        args: [
          cliEntry,
          'service',
          '--supervised',
          '--config',
          configFile,
          '--host',
          plan.service.host,
          '--port',
          String(plan.service.port),
          // Tool calls of the MCP endpoint go through the gateway listener, so the APIs' policies apply.
          '--gateway-url',
          `http://${connectableHost(plan.gateway.host)}:${plan.gateway.port}`,
        ],
        ready: httpReady(`http://${plan.service.host}:${plan.service.port}/healthz`),
      });
      await Promise.race([envoys.start(bootstrap, plan.admin), diedDuringStart]);
    } catch (error) {
      console.error(`up: ${error instanceof Error ? error.message : String(error)}`);
      await supervisor.stopAll();
      await envoys.cleanUp();
      await rm(path.dirname(bootstrap), { recursive: true, force: true });
      return 1;
    }

    const gatewayHost = plan.gateway.host === '0.0.0.0' ? 'localhost' : plan.gateway.host;
    console.log(`\nPortcullis is up.`);
    console.log(`  gateway       http://${gatewayHost}:${plan.gateway.port}/`);
    for (const api of loaded.config.apis) {
      console.log(`  api ${api.id.padEnd(9)} http://${gatewayHost}:${plan.gateway.port}/${api.urlSuffix}/`);
    }
    for (const listener of plan.listeners ?? []) {
      if (listener.role === 'http' && listener.address.port === plan.gateway.port) continue;
      const scheme = listener.role === 'https' ? 'https' : 'http';
      const host = listener.address.host === '0.0.0.0' ? 'localhost' : listener.address.host;
      console.log(`  ${listener.role.padEnd(13)} ${scheme}://${host}:${listener.address.port}/`);
    }
    console.log(
      `  envoy admin   http://${plan.admin.host}:${plan.admin.port}/  (stats: /stats?filter=ext_proc)`,
    );
    console.log(`Press Ctrl-C to stop.\n`);

    const gateway = new GatewayReload(
      configFile,
      path.dirname(bootstrap),
      supervisor,
      envoys,
      engineNames,
      plan,
    );
    await gateway.watch();
    const reloadOnHangup = () => void gateway.reload();
    process.on('SIGHUP', reloadOnHangup);

    const outcome = await Promise.race([stop.then(() => undefined), unexpectedExit]);
    process.off('SIGHUP', reloadOnHangup);
    gateway.close();
    await supervisor.stopAll();
    await envoys.cleanUp();
    // The bootstraps of every epoch were written there.
    await rm(path.dirname(bootstrap), { recursive: true, force: true });
    if (outcome) {
      console.error(
        `up: ${outcome.name} stopped unexpectedly (${describeExit(outcome)}); stopped everything else.`,
      );
      return 1;
    }
    console.log('up: stopped.');
    return 0;
  },
};

/** How long an engine may take to load and compile the configuration again. */
const engineReloadTimeoutMs = 15_000;

/**
 * Applies a changed configuration to the running gateway without restarting it. The engines reload on SIGHUP (each
 * swaps its pipelines; requests in flight finish on the old ones); Envoy is hot-restarted when its bootstrap
 * changes. The order keeps every request on a route that some policy guards and a cluster that exists: first an
 * Envoy with only the routes both configurations have and the clusters of both; once the Envoy before it has
 * drained and exited, the engines; then an Envoy with exactly the new bootstrap. A configuration that does not load, compile or validate is refused whole.
 */
class GatewayReload {
  private readonly watcher = new FileSetWatcher(() => void this.reload(), 250);
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private files = 0;
  private current: {
    config: GatewayConfig;
    plan: RuntimePlan;
    bootstrap: Record<string, unknown>;
    text: string;
  };

  constructor(
    private readonly configFile: string,
    private readonly directory: string,
    private readonly supervisor: Supervisor,
    private readonly envoys: EnvoyFamily,
    private readonly engines: readonly string[],
    plan: RuntimePlan,
  ) {
    const bootstrap = bootstrapObject(plan);
    this.current = { config: plan.config, plan, bootstrap, text: renderBootstrap(bootstrap) };
  }

  async watch(): Promise<void> {
    this.watcher.watch(await referencedFiles(this.configFile));
  }

  close(): void {
    this.closed = true;
    this.watcher.close();
  }

  /** Reloads once now; a change noticed meanwhile reloads again afterwards (the last change wins). */
  reload(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.apply()
      .catch((error: unknown) =>
        console.error(`up: reload failed: ${error instanceof Error ? error.message : String(error)}`),
      )
      .finally(async () => {
        this.running = undefined;
        if (!this.closed) this.watcher.watch(await referencedFiles(this.configFile));
        if (this.again && !this.closed) {
          this.again = false;
          void this.reload();
        }
      });
    return this.running;
  }

  private async apply(): Promise<void> {
    let config: GatewayConfig;
    let configDirectory: string;
    try {
      const loaded = await loadConfigFile(this.configFile);
      compileGateway(loaded);
      config = loaded.config;
      configDirectory = loaded.directory;
    } catch (error) {
      if (!(error instanceof ConfigError || error instanceof GatewayLoadError)) throw error;
      console.error(`up: configuration refused, nothing changed:\n${error.message}`);
      return;
    }
    const fixed = (['engine', 'service', 'processes'] as const).filter(
      (key) => JSON.stringify(config[key]) !== JSON.stringify(this.current.config[key]),
    );
    if (fixed.length > 0)
      console.error(`up: changes to ${fixed.join(', ')} take effect when up starts again; applying the rest`);
    const plan = await planRuntime(keepRunningPorts(config, this.current.config, this.current.plan), {
      directory: configDirectory,
    });
    const bootstrap = bootstrapObject(plan);
    const text = renderBootstrap(bootstrap);
    if (this.closed) return;

    if (text === this.current.text) {
      await this.reloadEngines();
      this.current = { ...this.current, config };
      console.log('up: configuration reloaded (policies; Envoy unchanged)');
      return;
    }
    const nextFile = await this.write(text);
    const invalid = await this.envoys.validate(nextFile);
    if (invalid) {
      console.error(`up: configuration refused, nothing changed: Envoy rejects the bootstrap:\n${invalid}`);
      return;
    }
    const transition = renderBootstrap(transitionBootstrap(this.current.bootstrap, bootstrap));
    try {
      // The engines switch only once no Envoy without the new clusters serves any more: the previous epoch goes
      // on serving the connections it had while it drains.
      if (transition !== text) {
        await this.envoys.start(await this.write(transition), plan.admin);
        await this.envoys.previousGone();
        await this.reloadEngines();
        await this.envoys.start(nextFile, plan.admin);
      } else {
        await this.envoys.start(nextFile, plan.admin);
        await this.envoys.previousGone();
        await this.reloadEngines();
      }
    } catch (error) {
      console.error(
        `up: the new Envoy did not start, the previous one keeps serving: ${error instanceof Error ? error.message : String(error)}`,
      );
      return;
    }
    this.current = { config, plan, bootstrap, text };
    console.log(`up: configuration reloaded (Envoy hot-restarted, epoch ${this.envoys.currentEpoch()})`);
  }

  private async write(text: string): Promise<string> {
    const file = path.join(this.directory, `envoy-${++this.files}.yaml`);
    await writeFile(file, text);
    return file;
  }

  /** SIGHUP to every engine, then waits until each said it reloaded (or refused, or did not answer in time). */
  private async reloadEngines(): Promise<void> {
    const waiting = new Set(this.engines);
    let stopListening = () => {};
    const answered = new Promise<void>((resolve) => {
      stopListening = this.supervisor.onLine((name, line) => {
        if (!waiting.has(name) || !/^engine: configuration (reloaded|refused)/.test(line)) return;
        waiting.delete(name);
        if (waiting.size === 0) resolve();
      });
    });
    for (const name of this.engines) if (!this.supervisor.signal(name, 'SIGHUP')) waiting.delete(name);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      waiting.size === 0 ? Promise.resolve() : answered,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, engineReloadTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    stopListening();
    if (waiting.size > 0) console.error(`up: ${[...waiting].join(', ')} did not report a reload in time`);
  }
}

/**
 * The new configuration with the ports the running processes have: engines and the service are not restarted
 * by a reload, and a port the configuration leaves to the system (0) keeps the one it got.
 */
function keepRunningPorts(config: GatewayConfig, running: GatewayConfig, plan: RuntimePlan): GatewayConfig {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return {
    ...config,
    engine: { ...config.engine, host: running.engine.host, ports: plan.engine.endpoints.map((e) => e.port) },
    service: { ...config.service, host: plan.service.host, port: plan.service.port },
    admin: same(config.admin, running.admin) ? plan.admin : config.admin,
    gateway: same(config.gateway, running.gateway)
      ? { ...config.gateway, http: { ...config.gateway.http, port: plan.gateway.port } }
      : config.gateway,
  };
}
