import { parseArgs } from 'node:util';
import { loadConfigFile } from '../../config/load.js';
import type { GatewayConfig } from '../../config/schema.js';
import { type CliCommand, InputError, UsageError } from '../command.js';
import { type Snapshot, type Sources, takeSnapshot } from '../stats/sample.js';
import { loadView, renderView } from '../stats/view.js';

/** `--watch` refreshes at most this often and at least this rarely. */
const watchSeconds = { min: 1, max: 3600 };

export const command: CliCommand = {
  usage:
    "portcullis stats --config FILE [--interval SECONDS] [--watch [SECONDS]] [--count N]   (reads Envoy's admin /stats and the engines' /metrics of the running gateway: req/s, status classes and p50/p99 by API, ext_proc stream errors and timeouts, policy refusals by reason; --watch refreshes every SECONDS (default 2) until Ctrl-C or N refreshes)",
  async run(args) {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: {
        config: { type: 'string' },
        interval: { type: 'string', default: '1' },
        watch: { type: 'boolean', default: false },
        count: { type: 'string' },
      },
      allowPositionals: true,
      strict: true,
    });
    if (values.config === undefined) throw new UsageError('--config is required');
    // `--watch 5`: the seconds are the one word after it (parseArgs has no optional option values).
    if (positionals.length > (values.watch ? 1 : 0))
      throw new UsageError(`unexpected argument "${positionals.at(-1)}"`);
    const seconds = values.watch
      ? readSeconds(positionals[0] ?? '2', '--watch')
      : readSeconds(values.interval, '--interval');
    const count = values.count === undefined ? undefined : Number(values.count);
    if (count !== undefined && (!Number.isInteger(count) || count < 1))
      throw new UsageError(`--count must be a positive whole number, got "${values.count}"`);
    const { config } = await loadConfigFile(values.config);
    const sources = sourcesOf(config);
    const apiIds = config.apis.map((api) => api.id);
    const title = `portcullis stats (Envoy admin ${sources.admin}, ${sources.engines.length} engine metrics endpoint(s))`;

    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      let before: Snapshot = await takeSnapshot(sources);
      // One view without --watch; with it, until Ctrl-C or --count views.
      const views = values.watch ? (count ?? Number.POSITIVE_INFINITY) : 1;
      for (let shown = 0; shown < views && !stop.signal.aborted; shown++) {
        await delay(seconds * 1000, stop.signal);
        if (stop.signal.aborted) break;
        const after = await takeSnapshot(sources);
        const text = renderView(loadView(before, after, apiIds), title);
        // A terminal shows the latest view in place; a pipe or a file gets them one after another.
        process.stdout.write(values.watch && process.stdout.isTTY ? `\x1b[2J\x1b[H${text}` : `${text}\n`);
        before = after;
      }
    } catch (error) {
      throw new InputError(error instanceof Error ? error.message : String(error));
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    return 0;
  },
};

function readSeconds(text: string, option: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < watchSeconds.min || value > watchSeconds.max)
    throw new UsageError(
      `${option} must be ${watchSeconds.min} to ${watchSeconds.max} seconds, got "${text}"`,
    );
  return value;
}

/**
 * Where the running gateway tells its numbers: the admin listener, and each engine's metrics port (`up` gives
 * engine N the port engine.metricsPort + N). Port 0 is chosen at start and cannot be found from the file.
 */
export function sourcesOf(config: GatewayConfig): Sources {
  if (config.admin.port === 0)
    throw new InputError(
      'admin.port is 0 (chosen at start): give the admin listener a fixed port to read its stats',
    );
  const loopback = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);
  const hostPart = (host: string) => (host.includes(':') ? `[${host}]` : host);
  const engineHost = hostPart(loopback(config.engine.host));
  const metricsPort = config.engine.metricsPort;
  return {
    admin: `http://${hostPart(loopback(config.admin.host))}:${config.admin.port}`,
    engines:
      metricsPort === undefined
        ? []
        : config.engine.ports.map((_, index) => `http://${engineHost}:${metricsPort + index}/metrics`),
  };
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
