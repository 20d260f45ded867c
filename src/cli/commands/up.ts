import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { findEnvoy } from '../../../envoy/binary.js';
import { listenersOf } from '../../../envoy/bootstrap.js';
import { compileGateway } from '../../config/gateway.js';
import { loadConfigText } from '../../config/load.js';
import { type BoundPorts, planRuntime, withBoundPorts } from '../../config/plan.js';
import type { CompanionProcessConfig } from '../../config/schema.js';
import {
  readConfigFiles,
  runningSnapshot,
  withRunningTlsFiles,
  writeRunningSnapshot,
} from '../../config/snapshot.js';
import { checkEngineHealth } from '../../extproc/health-client.js';
import { createManagementApp, type ManagementServer, serveManagement } from '../../management/index.js';
import type { GatewayUrlMessage } from '../child-report.js';
import { type CliCommand, InputError, UsageError } from '../command.js';
import { GatewayReload, SERVICE } from '../gateway-reload.js';
import { EnvoyFamily } from '../hot-restart.js';
import { waitForStopSignal } from '../signals.js';
import {
  type ChildSpec,
  type GaveUp,
  httpReady,
  pollUntil,
  type StartedChild,
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
    const configFile = path.resolve(values.config);
    // What runs is what was validated: the texts read now are the running configuration's.
    const texts = await readConfigFiles(configFile).catch((error: NodeJS.ErrnoException) => {
      throw new InputError(`cannot read ${values.config} (${error.code ?? error.message})`);
    });
    const loaded = await loadConfigText(texts.get(configFile)!, configFile, texts);
    // Policy errors are reported now, before anything starts (each engine compiles the same documents again).
    compileGateway(loaded);
    const envoyBinary = findEnvoy();
    // Relative TLS files and the development certificate live beside the configuration. Ports left to the system
    // (0) stay 0 in this plan: each process binds its own and the plan takes what they report.
    // The bootstraps of every epoch, the running configuration's snapshot and Envoy's copies of the certificates that
    // run are written here (only we can read it).
    const stateDirectory = await mkdtemp(path.join(tmpdir(), 'portcullis-up-'));
    // What the engines and the service start from, and load again when told to reload: the configuration that runs.
    const snapshotFile = path.join(stateDirectory, 'running.json');
    const prepared = await (async () => {
      const snapshot = await runningSnapshot(loaded);
      await writeRunningSnapshot(snapshotFile, snapshot.text);
      const plan = await planRuntime(loaded.config, { directory: loaded.directory });
      return { snapshot, plan: await withRunningTlsFiles(plan, snapshot, stateDirectory) };
    })().catch(async (error: unknown) => {
      // It may hold private keys already.
      await rm(stateDirectory, { recursive: true, force: true });
      throw error;
    });
    const snapshot = prepared.snapshot;
    let plan = prepared.plan;

    const supervisor = new Supervisor();
    const envoys = await EnvoyFamily.create(supervisor, envoyBinary, loaded.config.envoy);
    const engineNames = plan.engine.endpoints.map((_, index) =>
      plan.engine.endpoints.length > 1 ? `engine-${index + 1}` : 'engine',
    );
    const gaveUp = new Promise<GaveUp>((resolve) => supervisor.onGiveUp(resolve));
    const stop = waitForStopSignal();
    // A child that keeps dying while later ones are still starting ends the start-up.
    const keptDying = gaveUp.then((giving) => {
      throw new Error(keepsDying(giving));
    });
    keptDying.catch(() => {});
    const during = <T>(step: Promise<T>) => Promise.race([step, keptDying]);

    const gateway = new GatewayReload(
      configFile,
      stateDirectory,
      supervisor,
      envoys,
      engineNames,
      plan,
      texts,
      snapshotFile,
      snapshot.text,
    );
    envoys.restartWith(() => gateway.startEnvoy());
    /** The ports the engines and the service bound: a restarted one binds the same, which Envoy is configured with. */
    const bound: { engines: number[]; service?: number; management?: number } = { engines: [] };
    // What the gateway listener has now (a reload may have moved it since start-up).
    const gatewayUrl = () => {
      const listener = gateway.runningPlan().gateway;
      return `http://${connectableHost(listener.host)}:${listener.port}`;
    };
    /**
     * Starts a dead child again on the port Envoy knows it by. Nothing may depend on that port staying free: when the
     * child cannot start there, it starts on any port, and Envoy's next epoch is given the one it got.
     */
    const restartOnItsPort = async (
      name: string,
      port: number,
      start: (port: number) => Promise<StartedChild>,
      moved: (port: number) => BoundPorts,
    ): Promise<void> => {
      try {
        await start(port);
        return;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        console.error(`up: ${name} did not start on port ${port} again (${message}); trying any free port`);
      }
      const started = await start(0);
      if (started.port === port) return;
      try {
        await gateway.startEnvoy(moved(started.port!));
        console.error(
          `up: ${name} moved to port ${started.port}; Envoy follows (epoch ${envoys.currentEpoch()})`,
        );
      } catch (error) {
        // The child runs; the next reload or Envoy restart takes its port from the plan, which has it.
        const message = error instanceof Error ? error.message : String(error);
        console.error(
          `up: ${name} moved to port ${started.port}, but Envoy could not follow yet: ${message}`,
        );
      }
    };
    const companionSpec = (companion: CompanionProcessConfig): ChildSpec => {
      const [program, ...rest] = companion.command;
      return {
        name: companion.name,
        command: program === 'node' ? process.execPath : program!,
        args: rest,
        cwd: path.resolve(loaded.directory, companion.cwd ?? '.'),
        env: { ...process.env, ...companion.env },
        ready: companion.readyUrl ? httpReady(companion.readyUrl) : async () => {},
        restart: () => supervisor.start(companionSpec(companion)),
      };
    };
    const engineSpec = (index: number, port: number): ChildSpec => {
      const host = plan.engine.endpoints[index]!.host;
      return {
        name: engineNames[index]!,
        command: process.execPath,
        ipc: true,
        args: [
          cliEntry,
          'engine',
          '--supervised',
          // Not the configuration's files: what runs, even when an edit on disk was refused. `up` watches the files
          // and tells the engines when to reload (SIGHUP), in step with Envoy (see GatewayReload).
          '--snapshot',
          snapshotFile,
          '--host',
          host,
          '--port',
          String(port),
          // Each engine process gets its own metrics port: the configured one, then the next ones.
          ...(loaded.config.engine.metricsPort === undefined
            ? []
            : ['--metrics-port', String(loaded.config.engine.metricsPort + index)]),
        ],
        ready: async (signal, child) => {
          const port = await child.port;
          await pollUntil(() => checkEngineHealth(host, port), signal);
        },
        restart: () =>
          restartOnItsPort(
            engineNames[index]!,
            bound.engines[index]!,
            async (port) => {
              const started = await supervisor.start(engineSpec(index, port));
              bound.engines[index] = started.port!;
              return started;
            },
            () => ({ engines: bound.engines }),
          ),
      };
    };
    // Until Envoy runs, a gateway port left to the system is not known: the service then waits for it over IPC and
    // is ready, for now, once it reported its own port.
    const serviceSpec = (port: number, gateway: string | undefined): ChildSpec => ({
      name: SERVICE,
      command: process.execPath,
      ipc: true,
      args: [
        cliEntry,
        'service',
        '--supervised',
        // What runs, like the engines.
        '--snapshot',
        snapshotFile,
        '--host',
        plan.service.host,
        '--port',
        String(port),
        // Tool calls of the MCP endpoint go through the gateway listener, so the APIs' policies apply.
        ...(gateway === undefined ? ['--await-gateway-url'] : ['--gateway-url', gateway]),
      ],
      ready: async (signal, child) => {
        const port = await child.port;
        if (gateway !== undefined) await serviceHealthy(plan.service.host, port, signal);
      },
      restart: () =>
        restartOnItsPort(
          SERVICE,
          bound.service!,
          async (port) => {
            const started = await supervisor.start(serviceSpec(port, gatewayUrl()));
            bound.service = started.port!;
            return started;
          },
          (port) => ({ service: port }),
        ),
    });
    const gatewayPortKnown = plan.gateway.port !== 0;

    let management: ManagementServer | undefined;
    try {
      for (const companion of loaded.config.processes)
        await during(supervisor.start(companionSpec(companion)));
      for (const [index, endpoint] of plan.engine.endpoints.entries()) {
        const started = await during(supervisor.start(engineSpec(index, endpoint.port)));
        bound.engines[index] = started.port!;
      }
      bound.service = (
        await during(
          supervisor.start(serviceSpec(plan.service.port, gatewayPortKnown ? gatewayUrl() : undefined)),
        )
      ).port!;
      if (plan.management) {
        management = await serveManagement(
          createManagementApp({ store: gateway, restarts: () => supervisor.restartCounts() }),
          plan.management,
        );
        bound.management = management.port;
      }
      const portless = plan;
      plan = withBoundPorts(plan, bound);
      gateway.adopt(plan);
      plan = await during(gateway.startEnvoy());
      // The management listener reaches Envoy's own admin through a cluster: with the admin port left to the system
      // the first Envoy's cluster could not name it; the next epoch, which takes the listeners over, does.
      if (portless.admin.port === 0 && listenersOf(plan).some((listener) => listener.role === 'management'))
        plan = await during(gateway.startEnvoy());
      if (!gatewayPortKnown) {
        supervisor.send(SERVICE, { kind: 'gateway-url', url: gatewayUrl() } satisfies GatewayUrlMessage);
        await during(serviceHealthy(plan.service.host, bound.service, AbortSignal.timeout(30_000)));
      }
    } catch (error) {
      console.error(`up: ${error instanceof Error ? error.message : String(error)}`);
      await supervisor.stopAll();
      await management?.close();
      await envoys.cleanUp();
      await rm(stateDirectory, { recursive: true, force: true });
      return 1;
    }

    // Before saying so: an edit saved as soon as up says it is up is seen.
    await gateway.watch();
    const gatewayHost = plan.gateway.host === '0.0.0.0' ? 'localhost' : plan.gateway.host;
    console.log(`\nPortcullis is up.`);
    console.log(`  gateway       http://${gatewayHost}:${plan.gateway.port}/`);
    for (const api of loaded.config.apis) {
      console.log(`  api ${api.id.padEnd(9)} http://${gatewayHost}:${plan.gateway.port}/${api.urlSuffix}/`);
    }
    for (const listener of plan.listeners ?? []) {
      if (listener.role === 'http' && listener.address.port === plan.gateway.port) continue;
      const tls =
        listener.role === 'https' || (listener.role === 'management' && plan.tls && plan.management);
      const scheme = tls ? 'https' : 'http';
      const host = listener.address.host === '0.0.0.0' ? 'localhost' : listener.address.host;
      console.log(`  ${listener.role.padEnd(13)} ${scheme}://${host}:${listener.address.port}/`);
    }
    console.log(
      `  envoy admin   http://${plan.admin.host}:${plan.admin.port}/  (stats: /stats?filter=ext_proc)`,
    );
    console.log(`Press Ctrl-C to stop.\n`);

    const reloadOnHangup = () => void gateway.reload(true);
    process.on('SIGHUP', reloadOnHangup);

    const outcome = await Promise.race([stop.then(() => undefined), gaveUp]);
    process.off('SIGHUP', reloadOnHangup);
    gateway.close();
    // First, so that no child is restarted while the others stop.
    await supervisor.stopAll();
    await management?.close();
    await envoys.cleanUp();
    await rm(stateDirectory, { recursive: true, force: true });
    if (outcome) {
      console.error(`up: ${keepsDying(outcome)}; stopped everything else.`);
      return 1;
    }
    console.log('up: stopped.');
    return 0;
  },
};

function keepsDying(giving: GaveUp): string {
  return `${giving.family} keeps dying (${giving.deaths} times within ${giving.windowMs / 1000} s, last: ${giving.last})`;
}

/** The service answers its health check (it does once it is built, not while it waits for the gateway URL). */
async function serviceHealthy(host: string, port: number, signal: AbortSignal): Promise<void> {
  await httpReady(`http://${connectableHost(host)}:${port}/healthz`)(signal);
  if (signal.aborted) throw new Error(`the service was not healthy on port ${port} in time`);
}
