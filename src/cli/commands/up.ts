import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { findEnvoy } from '../../../envoy/binary.js';
import { envoyArgs, writeBootstrap } from '../../config/envoy.js';
import { compileGateway } from '../../config/gateway.js';
import { loadConfigFile } from '../../config/load.js';
import { planRuntime } from '../../config/plan.js';
import { checkEngineHealth } from '../../extproc/health-client.js';
import { type CliCommand, UsageError } from '../command.js';
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
    const plan = await planRuntime(loaded.config);
    const bootstrap = await writeBootstrap(plan);
    const configFile = path.resolve(values.config);

    const supervisor = new Supervisor();
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
          name: plan.engine.endpoints.length > 1 ? `engine-${index + 1}` : 'engine',
          command: process.execPath,
          args: [
            cliEntry,
            'engine',
            '--supervised',
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
      await start({
        name: 'envoy',
        command: envoyBinary,
        args: envoyArgs(bootstrap, loaded.config.envoy),
        ready: httpReady(`http://${plan.admin.host}:${plan.admin.port}/ready`, 'LIVE'),
      });
    } catch (error) {
      console.error(`up: ${error instanceof Error ? error.message : String(error)}`);
      await supervisor.stopAll();
      return 1;
    }

    const gatewayHost = plan.gateway.host === '0.0.0.0' ? 'localhost' : plan.gateway.host;
    console.log(`\nPortcullis is up.`);
    console.log(`  gateway       http://${gatewayHost}:${plan.gateway.port}/`);
    for (const api of loaded.config.apis) {
      console.log(`  api ${api.id.padEnd(9)} http://${gatewayHost}:${plan.gateway.port}/${api.urlSuffix}/`);
    }
    console.log(
      `  envoy admin   http://${plan.admin.host}:${plan.admin.port}/  (stats: /stats?filter=ext_proc)`,
    );
    console.log(`Press Ctrl-C to stop.\n`);

    const outcome = await Promise.race([stop.then(() => undefined), unexpectedExit]);
    await supervisor.stopAll();
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
