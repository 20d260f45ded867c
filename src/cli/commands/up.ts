import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { findEnvoy } from '../../../envoy/binary.js';
import { writeBootstrap } from '../../config/envoy.js';
import { compileGateway } from '../../config/gateway.js';
import { loadConfigText } from '../../config/load.js';
import { planRuntime } from '../../config/plan.js';
import { readConfigFiles } from '../../config/snapshot.js';
import { checkEngineHealth } from '../../extproc/health-client.js';
import { createManagementApp, type ManagementServer, serveManagement } from '../../management/index.js';
import { type CliCommand, InputError, UsageError } from '../command.js';
import { GatewayReload } from '../gateway-reload.js';
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
    const configFile = path.resolve(values.config);
    // What runs is what was validated: the texts read now are the running configuration's.
    const texts = await readConfigFiles(configFile).catch((error: NodeJS.ErrnoException) => {
      throw new InputError(`cannot read ${values.config} (${error.code ?? error.message})`);
    });
    const loaded = await loadConfigText(texts.get(configFile)!, configFile, texts);
    // Policy errors are reported now, before anything starts (each engine compiles the same documents again).
    compileGateway(loaded);
    const envoyBinary = findEnvoy();
    // Relative TLS files and the development certificate live beside the configuration.
    const plan = await planRuntime(loaded.config, { directory: loaded.directory });
    const bootstrap = await writeBootstrap(plan);

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

    const gateway = new GatewayReload(
      configFile,
      path.dirname(bootstrap),
      supervisor,
      envoys,
      engineNames,
      plan,
      texts,
    );
    let management: ManagementServer | undefined;
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
      if (plan.management) {
        management = await serveManagement(createManagementApp({ store: gateway }), plan.management);
      }
      await Promise.race([envoys.start(bootstrap, plan.admin), diedDuringStart]);
    } catch (error) {
      console.error(`up: ${error instanceof Error ? error.message : String(error)}`);
      await management?.close();
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

    await gateway.watch();
    const reloadOnHangup = () => void gateway.reload(true);
    process.on('SIGHUP', reloadOnHangup);

    const outcome = await Promise.race([stop.then(() => undefined), unexpectedExit]);
    process.off('SIGHUP', reloadOnHangup);
    gateway.close();
    await management?.close();
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
