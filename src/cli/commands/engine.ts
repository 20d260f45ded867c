import { stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { loadConfigFile } from '../../config/load.js';
import { loadRunningSnapshot } from '../../config/snapshot.js';
import { metricsExport, traceExport } from '../../config/telemetry-schema.js';
import { backendRoutings } from '../../engine/backend-routing.js';
import { buildEngine, type EngineParts } from '../../engine/engine.js';
import { EngineStateKeeper } from '../../engine/engine-state.js';
import { ConfigReloader, SwappableExchanges } from '../../engine/generations.js';
import { type MetricsSource, processMetrics, serveMetrics } from '../../engine/metrics.js';
import { passThroughExchanges } from '../../extproc/passthrough.js';
import { startExtProcServer } from '../../extproc/server.js';
import { errorFields, processLogger } from '../../log.js';
import type { ProcessMetricsExport } from '../../metrics-export.js';
import type { ProcessTracing } from '../../tracing.js';
import {
  reportListening,
  reportReload,
  reportStandby,
  reportTakeOverRefused,
  type TakeOverMessage,
  takeOverFromParent,
} from '../child-report.js';
import { type CliCommand, UsageError } from '../command.js';
import { waitForStopSignal } from '../signals.js';

export const command: CliCommand = {
  usage:
    "portcullis engine --port PORT|0 [--host HOST] | --socket PATH [--config FILE [--no-watch]] [--authz] [--backend-routing engine|envoy-route] [--metrics-port PORT]   (without --config: pass-through; SIGHUP reloads; --authz: ext_authz instead of ext_proc, header-only pipelines; envoy-route: the Envoy in front routes by its own routes, so policies may not choose another backend; under up, --standby: a warm spare that listens only when up hands it a dead engine's port)",
  async run(args) {
    const { values } = parseArgs({
      args: [...args],
      options: {
        supervised: { type: 'boolean', default: false },
        port: { type: 'string' },
        // A Unix domain socket instead of TCP: for an Envoy on the same host (a sidecar).
        socket: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        config: { type: 'string' },
        // Under `up`: the running configuration's snapshot (config/snapshot.ts), read at start and on each SIGHUP,
        // so that a restarted engine runs what up validated, not an edit it refused.
        snapshot: { type: 'string' },
        'metrics-port': { type: 'string' },
        // Under `up`, which orders the reload of the engines and of Envoy itself and sends SIGHUP.
        'no-watch': { type: 'boolean', default: false },
        // Serve Envoy's ext_authz filter (envoy.service.auth.v3.Authorization) instead of ext_proc.
        authz: { type: 'boolean', default: false },
        // Whether the Envoy in front follows the engine's backend choice (engine/backend-routing.ts).
        'backend-routing': { type: 'string', default: 'engine' },
        // Under `up`, with --snapshot: a warm spare (cli/warm-spare.ts). It loads and builds everything, then
        // waits for up to hand it a dead engine's port (and metrics port) over IPC.
        standby: { type: 'boolean', default: false },
      },
    });
    const standby = values.standby === true && standbyOptions(values);
    const socketPath = values.socket;
    if (socketPath !== undefined && values.port !== undefined)
      throw new UsageError('--port and --socket exclude each other');
    if (socketPath === '') throw new UsageError('--socket must be a file path, got ""');
    const port = Number(values.port);
    if (!standby && socketPath === undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
      throw new UsageError(`--port must be a port number, got "${values.port}"`);
    if (values.config !== undefined && values.snapshot !== undefined)
      throw new UsageError('--config and --snapshot exclude each other');
    const backendRouting = backendRoutings.find((routing) => routing === values['backend-routing']);
    if (backendRouting === undefined)
      throw new UsageError(
        `--backend-routing must be one of ${backendRoutings.join(', ')}, got "${values['backend-routing']}"`,
      );
    const snapshot = values.snapshot;
    const source = snapshot ?? values.config;
    let activeStreams = () => 0;
    // Caches and counters outlive each configuration generation: a reload keeps them (see EngineStateKeeper).
    const states = new EngineStateKeeper({ activeStreams: () => activeStreams() });
    // The first configuration's telemetry.otlp decides for the process's life (a tracer provider is global).
    let tracing: ProcessTracing | undefined;
    let metricsPush: ProcessMetricsExport | undefined;
    let engine: SwappableExchanges<EngineParts> | undefined;
    // The snapshot file as it was when last built: a warm spare that missed a reload catches up when it takes over.
    let built = '';
    const build = async (file: string) => {
      if (snapshot) built = await snapshotVersion(file);
      const loaded = await (snapshot ? loadRunningSnapshot(file) : loadConfigFile(file));
      const otlp = loaded.config.telemetry?.otlp;
      // The OpenTelemetry SDK is imported only when a collector is configured (hundreds of modules otherwise loaded
      // at every start).
      if (otlp && !tracing) {
        const { startTracing } = await import('../../tracing-export.js');
        tracing = startTracing(traceExport(otlp, 'engine'));
      }
      // What /metrics serves: the serving configuration's registry (its engine state's) and the process's.
      if (otlp && !metricsPush) {
        const { startMetricsExport } = await import('../../metrics-export.js');
        metricsPush = startMetricsExport(metricsExport(otlp, 'engine'), () =>
          engine ? [engine.current.metrics.registry, processMetrics()] : [],
        );
      }
      return buildEngine(loaded, {
        states,
        transport: values.authz ? 'ext_authz' : 'ext_proc',
        backendRouting,
        ...(tracing ? { tracer: tracing.tracer } : {}),
      });
    };
    engine = source ? new SwappableExchanges(await build(source)) : undefined;
    const reloader =
      engine &&
      new ConfigReloader(
        source!,
        engine,
        build,
        (outcome) => {
          if (outcome.ok) processLogger.info(`configuration reloaded (generation ${outcome.generation})`);
          else
            processLogger.error(`configuration refused, still serving the previous one:\n${outcome.errors}`);
          // Under `up`, which waits for it before the next step of the reload.
          reportReload(outcome);
        },
        // A snapshot is replaced by up, which sends SIGHUP when it has.
        { watch: values['no-watch'] !== true && snapshot === undefined },
      );
    await reloader?.start();
    const reloadOnHangup = () => void reloader?.reload();
    if (reloader) process.on('SIGHUP', reloadOnHangup);
    const exchanges = engine?.exchanges ?? passThroughExchanges;
    const handlers = {
      exchanges,
      observer: {
        onHandlerError: (error: unknown, phase: string) =>
          processLogger.error(`${phase} handler failed`, errorFields(error)),
        onProtocolError: (message: string) => processLogger.error(`protocol error: ${message}`),
      },
    };
    // Caches, counters, tracing: what a stopped engine closes, once it no longer serves.
    const closeEngine = async () => {
      process.off('SIGHUP', reloadOnHangup);
      reloader?.close();
      await engine?.current.close();
      await states.close();
      await tracing?.shutdown();
    };
    const stopped = standby ? waitForStopSignal({ exitWithParent: true }) : undefined;
    // A reload up sent while this spare was still starting (before it could hear SIGHUP) is caught up on now.
    const catchUp = async () => {
      if (reloader && (await snapshotVersion(snapshot!)) !== built) await reloader.reload();
    };
    const takeOver = stopped && (await standBy(stopped, catchUp));
    if (stopped && !takeOver) {
      await closeEngine();
      return 0;
    }
    const listenPort = takeOver ? takeOver.port : port;
    const metricsPort = takeOver ? takeOver.metricsPort : values['metrics-port'];
    const address = socketPath !== undefined ? { socketPath } : { host: values.host!, port: listenPort };
    const server = await listen(values.authz === true, handlers, address, standby);
    activeStreams = () => server.activeStreams();
    processLogger.info(
      `engine listening on ${socketPath !== undefined ? `unix:${socketPath}` : `${values.host}:${server.port}`}`,
    );
    // Under `up`: the port it got when asked for any (0), so Envoy is configured with it.
    reportListening(server.port);
    const metricsServer =
      engine && metricsPort !== undefined
        ? await serveMetrics(new CurrentMetrics(engine), values.host!, Number(metricsPort))
        : undefined;
    if (metricsServer)
      processLogger.info(
        `engine metrics on http://${values.host}:${(metricsServer.address() as AddressInfo).port}/metrics`,
      );
    await (stopped ?? waitForStopSignal({ exitWithParent: values.supervised === true }));
    processLogger.info(`engine draining ${server.activeStreams()} open stream(s)`);
    process.off('SIGHUP', reloadOnHangup);
    await server.shutdown(5000);
    // A last export, with what the requests just drained counted.
    await metricsPush?.shutdown();
    metricsServer?.close();
    await closeEngine();
    return 0;
  },
};

/** `--standby` runs under up, from the snapshot, on the port up gives it. */
function standbyOptions(values: { port?: string; socket?: string; snapshot?: string }): true {
  if (values.port !== undefined || values.socket !== undefined)
    throw new UsageError(
      "--standby takes its port from up when it takes an engine's place: no --port or --socket",
    );
  if (values.snapshot === undefined) throw new UsageError('--standby runs under up, with --snapshot');
  return true;
}

/** Serves ext_proc (or ext_authz) at `address`; a warm spare tells up when it cannot take the port it was given. */
async function listen(
  authz: boolean,
  handlers: Parameters<typeof startExtProcServer>[0],
  address: Parameters<typeof startExtProcServer>[1],
  standby: boolean,
): Promise<{ readonly port: number; activeStreams(): number; shutdown(graceMs: number): Promise<void> }> {
  try {
    if (!authz) return await startExtProcServer(handlers, address);
    // ext_authz only when asked for: its server loads its protos through proto-loader, which an ext_proc engine's
    // start need not pay.
    const { startExtAuthzServer } = await import('../../extauthz/server.js');
    return await startExtAuthzServer(handlers, address);
  } catch (error) {
    // The dead engine's port is taken: up restarts the engine its usual way (on another port if need be).
    if (standby) reportTakeOverRefused(error instanceof Error ? error.message : String(error));
    throw error;
  }
}

/**
 * A warm spare (`--standby`): tells up it stands by, then waits for the dead engine's port it is to take — undefined
 * when it is stopped first. Before it takes over, it catches up on a reload it may have missed (`catchUp`).
 */
async function standBy(
  stopped: Promise<unknown>,
  catchUp: () => Promise<void>,
): Promise<TakeOverMessage | undefined> {
  reportStandby();
  processLogger.info('engine standing by as a warm spare (nothing listens until an engine dies)');
  const takeOver = await takeOverFromParent(stopped).catch(() => undefined);
  if (takeOver) await catchUp();
  return takeOver;
}

/** Tells a replaced snapshot from the one built (up replaces it by renaming a new file over it). */
async function snapshotVersion(file: string): Promise<string> {
  const info = await stat(file).catch(() => undefined);
  return info ? `${info.ino} ${info.mtimeMs} ${info.size}` : '';
}

/**
 * The metrics of whichever configuration serves now: they belong to the engine state, so they count on across
 * reloads, and start afresh only when the state section itself changed.
 */
class CurrentMetrics implements MetricsSource {
  constructor(private readonly engine: SwappableExchanges<EngineParts>) {}

  render(): Promise<string> {
    return this.engine.current.metrics.render();
  }
}
