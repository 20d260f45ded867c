import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { ConfigError } from '../../config/config-error.js';
import { type LoadedConfig, loadConfigFile } from '../../config/load.js';
import { loadRunningSnapshot } from '../../config/snapshot.js';
import { metricsExport, traceExport } from '../../config/telemetry-schema.js';
import { processMetrics, serveMetrics } from '../../engine/metrics.js';
import { processLogger } from '../../log.js';
import { ServiceMetrics } from '../../service/metrics.js';
import { createService, type Service } from '../../service/service.js';
import { gatewayUrlFromParent, reportListening, reportReload } from '../child-report.js';
import { type CliCommand, UsageError } from '../command.js';
import { waitForStopSignal } from '../signals.js';

export const command: CliCommand = {
  usage:
    'portcullis service --config FILE --port PORT [--host HOST] [--gateway-url URL] [--metrics-port PORT]   (--metrics-port: Prometheus /metrics on HOST, apart from the listener Envoy forwards to)',
  async run(args) {
    const { values } = parseArgs({
      args: [...args],
      options: {
        supervised: { type: 'boolean', default: false },
        config: { type: 'string' },
        // Under `up`, instead of --config: the running configuration's snapshot (config/snapshot.ts), read at start
        // and on each SIGHUP, so that a restarted service runs what up validated, not an edit it refused.
        snapshot: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        // Where tool calls reach Envoy's gateway listener; `up` passes it.
        'gateway-url': { type: 'string' },
        // Under `up` when the gateway port is 0: the URL comes over IPC once Envoy has bound it.
        'await-gateway-url': { type: 'boolean', default: false },
        'metrics-port': { type: 'string' },
      },
    });
    if ((values.config === undefined) === (values.snapshot === undefined))
      throw new UsageError('one of --config and --snapshot is required');
    const snapshot = values.snapshot;
    const load = () => (snapshot ? loadRunningSnapshot(snapshot) : loadConfigFile(values.config!));
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--port must be a port number, got "${values.port}"`);
    const metricsPort = values['metrics-port'] === undefined ? undefined : Number(values['metrics-port']);
    if (
      metricsPort !== undefined &&
      (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535)
    )
      throw new UsageError(`--metrics-port must be a port number, got "${values['metrics-port']}"`);
    const given = values['gateway-url'];
    if (given !== undefined && !/^https?:\/\/[^/?#]+\/?$/.test(given))
      throw new UsageError(`--gateway-url must be an http(s) origin, got "${given}"`);
    // A configuration that cannot be read or parsed ends the command before anything listens.
    const loaded = await load();
    // telemetry.otlp at start decides for the process's life (a tracer provider is global).
    const otlp = loaded.config.telemetry?.otlp;
    // The OpenTelemetry SDK is imported only when a collector is configured (hundreds of modules otherwise).
    const tracing = otlp
      ? (await import('../../tracing-export.js')).startTracing(traceExport(otlp, 'service'))
      : undefined;
    // Counted when someone reads them: Prometheus on --metrics-port, the collector over OTLP, or both.
    const metrics = metricsPort === undefined && !otlp ? undefined : new ServiceMetrics();
    const metricsPush =
      otlp && metrics
        ? (await import('../../metrics-export.js')).startMetricsExport(metricsExport(otlp, 'service'), () => [
            metrics.registry,
            processMetrics(),
          ])
        : undefined;
    // Bound before the service is built, so `up` learns the port (it may be 0: any free one) and can configure Envoy
    // with it while this process waits for the gateway's URL. Until the service is built it answers 503.
    let handle: RequestListener = (_request, response) => {
      response.writeHead(503, { 'content-type': 'text/plain' }).end('starting\n');
    };
    const server = createServer((request, response) => handle(request, response));
    await new Promise<void>((resolve, reject) =>
      server.once('listening', resolve).once('error', reject).listen(port, values.host),
    );
    const bound = (server.address() as AddressInfo).port;
    processLogger.info(`service listening on ${values.host}:${bound}`);
    reportListening(bound);
    const service = await (async () => {
      // `up` sends it once Envoy has bound the gateway listener when that port is left to the system.
      const gatewayUrl = values['await-gateway-url'] ? await gatewayUrlFromParent() : given;
      if (gatewayUrl) processLogger.info(`tool calls go through ${gatewayUrl}`);
      return createService(loaded, {
        ...(gatewayUrl ? { gatewayUrl } : {}),
        ...(metrics ? { metrics } : {}),
        ...(tracing ? { tracer: tracing.tracer } : {}),
      });
    })().catch((error: unknown) => {
      // The listening socket would keep the process alive: a service that cannot start exits (with the reason), so
      // the command fails at once and `up` notices at once.
      server.close();
      server.closeAllConnections();
      throw error;
    });
    handle = service.app.callback();
    const metricsServer =
      metrics && metricsPort !== undefined
        ? await serveMetrics(metrics, values.host, metricsPort)
        : undefined;
    if (metricsServer)
      processLogger.info(
        `service metrics on http://${values.host}:${(metricsServer.address() as AddressInfo).port}/metrics`,
      );
    if (service.mcpUrl)
      processLogger.info(`MCP endpoint ${service.mcpUrl}, issuer ${loaded.config.auth!.issuer}`);
    // SIGHUP (from `up`, once the engines run a changed configuration): read it again and follow its catalog.
    // One reload at a time, in order, so the last signal leaves the last configuration.
    let reloading = Promise.resolve();
    const reload = () => {
      reloading = reloading.then(() => reloadService(service, load));
    };
    process.on('SIGHUP', reload);
    await waitForStopSignal({ exitWithParent: values.supervised === true });
    process.off('SIGHUP', reload);
    await reloading;
    // Envoy keeps connections alive: finish what is in flight, then close the rest.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const force = setTimeout(() => server.closeAllConnections(), 5000);
    await closed;
    clearTimeout(force);
    // A last export, with what the requests just drained counted.
    await metricsPush?.shutdown();
    metricsServer?.close();
    await service.close();
    await tracing?.shutdown();
    return 0;
  },
};

/**
 * Applies the configuration as it is now; a configuration that does not load or fit is refused whole. Either way
 * `up` is told (it waits for that), after the line for humans.
 */
async function reloadService(service: Service, load: () => Promise<LoadedConfig>): Promise<void> {
  try {
    const outcome = await service.reload(await load());
    if (outcome.atNextStart.length > 0) {
      processLogger.warn(
        `changes to ${outcome.atNextStart.join(', ')} take effect when the service starts again`,
      );
    }
    processLogger.info(`configuration reloaded (${outcome.tools} tools)`);
    reportReload({ ok: true });
  } catch (error) {
    const message =
      error instanceof ConfigError
        ? error.message
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error);
    processLogger.error(`configuration refused, nothing changed:\n${message}`);
    reportReload({ ok: false, errors: message });
  }
}
