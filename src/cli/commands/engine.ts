import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createEngine } from '../../config/engine.js';
import { compileGateway } from '../../config/gateway.js';
import { loadConfigFile } from '../../config/load.js';
import { serveMetrics } from '../../extproc/metrics.js';
import { passThroughExchanges } from '../../extproc/passthrough.js';
import { startExtProcServer } from '../../extproc/server.js';
import { type CliCommand, UsageError } from '../command.js';
import { waitForStopSignal } from '../signals.js';

export const command: CliCommand = {
  name: 'engine',
  summary: 'run one policy engine process (the ext_proc gRPC server Envoy calls)',
  usage:
    'portcullis engine --port PORT [--host HOST] [--config FILE] [--metrics-port PORT]   (without --config: pass-through)',
  async run(args) {
    const { values } = parseArgs({
      args: [...args],
      options: {
        supervised: { type: 'boolean', default: false },
        port: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        config: { type: 'string' },
        'metrics-port': { type: 'string' },
      },
    });
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--port must be a port number, got "${values.port}"`);
    let activeStreams = () => 0;
    const engine = values.config
      ? createEngine(compileGateway(await loadConfigFile(values.config)), {
          activeStreams: () => activeStreams(),
        })
      : undefined;
    const exchanges = engine?.exchanges ?? passThroughExchanges;
    const server = await startExtProcServer(
      {
        exchanges,
        observer: {
          onHandlerError: (error, phase) =>
            console.error(
              `engine: ${phase} handler failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
            ),
          onProtocolError: (message) => console.error(`engine: protocol error: ${message}`),
        },
      },
      { host: values.host!, port },
    );
    activeStreams = () => server.activeStreams();
    console.log(`engine listening on ${values.host}:${server.port}`);
    const metricsServer =
      engine && values['metrics-port'] !== undefined
        ? await serveMetrics(engine.metrics, values.host!, Number(values['metrics-port']))
        : undefined;
    if (metricsServer)
      console.log(
        `engine metrics on http://${values.host}:${(metricsServer.address() as AddressInfo).port}/metrics`,
      );
    await waitForStopSignal({ exitWithParent: values.supervised === true });
    console.log(`engine draining ${server.activeStreams()} open stream(s)`);
    await server.shutdown(5000);
    metricsServer?.close();
    return 0;
  },
};
