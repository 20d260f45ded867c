import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { bootstrapYaml } from '../../config/envoy.js';
import { loadConfigFile } from '../../config/load.js';
import { planRuntime, planSidecar, type RuntimePlan, UnknownSidecarError } from '../../config/plan.js';
import type { Endpoint } from '../../envoy/bootstrap/plan.js';
import { buildSidecarBootstrap } from '../../envoy/sidecar.js';
import { buildEnvoySnippet } from '../../envoy/snippet.js';
import { type CliCommand, UsageError } from '../command.js';

export const command: CliCommand = {
  usage:
    'portcullis envoy-config --config FILE [--sidecar BACKEND | --snippet [--engine-port PORT | --engine-socket PATH] [--service-url URL]]   (--snippet: only what to paste into your own Envoy; --engine-port/--engine-socket: where `portcullis engine` listens, --service-url: where `portcullis service` does, in place of engine.ports and service.port)',
  async run(args) {
    const { values } = parseArgs({
      args: [...args],
      options: {
        config: { type: 'string' },
        sidecar: { type: 'string' },
        snippet: { type: 'boolean', default: false },
        'engine-socket': { type: 'string' },
        'engine-port': { type: 'string' },
        'service-url': { type: 'string' },
      },
    });
    if (!values.config) throw new UsageError('--config is required');
    if (values.snippet && values.sidecar !== undefined)
      throw new UsageError('--snippet and --sidecar exclude each other');
    for (const flag of ['engine-socket', 'engine-port', 'service-url'] as const)
      if (values[flag] !== undefined && !values.snippet)
        throw new UsageError(`--${flag} goes with --snippet`);
    if (values['engine-socket'] !== undefined && values['engine-port'] !== undefined)
      throw new UsageError('--engine-port and --engine-socket exclude each other');
    const { config, directory, file } = await loadConfigFile(values.config);
    if (values.snippet) {
      const plan = await planRuntime(config, { directory });
      const snippet = buildEnvoySnippet(
        snippetAddresses(plan, file, {
          enginePort: values['engine-port'],
          engineSocket: values['engine-socket'],
          serviceUrl: values['service-url'],
        }),
      );
      process.stdout.write(
        `${snippetIntroduction}${stringify(snippet, { lineWidth: 0, aliasDuplicateObjects: false })}`,
      );
      return 0;
    }
    if (values.sidecar !== undefined) {
      try {
        process.stdout.write(
          stringify(buildSidecarBootstrap(planSidecar(config, values.sidecar)), { lineWidth: 0 }),
        );
      } catch (error) {
        if (error instanceof UnknownSidecarError) throw new UsageError(error.message);
        throw error;
      }
      return 0;
    }
    // Ports left to the system (0) stay 0: under `up` each process binds its own and Envoy is given what they got.
    process.stdout.write(bootstrapYaml(await planRuntime(config, { directory })));
    return 0;
  },
};

/**
 * Where the operator's Envoy finds the engine and the service: the flags, else the file. Unlike under `up`, nobody
 * tells this Envoy the port a process bound, so a port left to the system (0, the default of `engine.ports` and
 * `service.port`) is refused here: Envoy would accept the cluster and answer every request with an empty 500.
 */
function snippetAddresses(
  plan: RuntimePlan,
  file: string,
  flags: {
    readonly enginePort: string | undefined;
    readonly engineSocket: string | undefined;
    readonly serviceUrl: string | undefined;
  },
): RuntimePlan {
  let engine = plan.engine;
  if (flags.engineSocket !== undefined) {
    if (flags.engineSocket === '') throw new UsageError('--engine-socket must be a file path, got ""');
    engine = { ...engine, socketPath: flags.engineSocket };
  } else if (flags.enginePort !== undefined) {
    const port = listeningPort('--engine-port', flags.enginePort);
    engine = { ...engine, endpoints: engine.endpoints.slice(0, 1).map(({ host }) => ({ host, port })) };
  } else if (engine.endpoints.some((endpoint) => endpoint.port === 0))
    throw new UsageError(
      `engine.ports in ${file} is 0 (any free port), which an Envoy configured by hand cannot find: pass --engine-port PORT (the port of \`portcullis engine --port PORT\`) or --engine-socket PATH, or set engine.ports`,
    );
  let service = plan.service;
  if (flags.serviceUrl !== undefined) service = serviceAddress(flags.serviceUrl);
  else if (service.port === 0)
    throw new UsageError(
      `service.port in ${file} is 0 (any free port), which an Envoy configured by hand cannot find: pass --service-url URL (where \`portcullis service --port PORT\` listens, e.g. http://127.0.0.1:8090) or set service.port`,
    );
  return { ...plan, engine, service };
}

function listeningPort(flag: string, text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65535)
    throw new UsageError(`${flag} must be a port number from 1 to 65535, got "${text}"`);
  return port;
}

/** The service serves plain HTTP (Envoy terminates TLS in front of it): an origin, nothing after it. */
function serviceAddress(text: string): Endpoint {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--service-url must be a URL like http://127.0.0.1:8090, got "${text}"`);
  }
  if (url.protocol !== 'http:' || url.pathname !== '/' || url.search !== '' || url.username !== '')
    throw new UsageError(
      `--service-url must be an http:// origin (scheme, host, port) like http://127.0.0.1:8090, got "${text}"`,
    );
  const port = url.port === '' ? 80 : Number(url.port);
  if (port === 0)
    throw new UsageError(`--service-url must name the port the service listens on, got "${text}"`);
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port };
}

const snippetIntroduction = `# Paste into your Envoy (see docs/your-own-envoy.md):
#   http_filters: into your HTTP connection manager, before envoy.filters.http.router, in this order.
#   routes: first in every virtual host that serves an API; name each API's own route "portcullis:<api id>"
#     (the engine then picks that API whatever the host), or leave it to the host and URL suffix.
#   clusters: into static_resources.clusters.
`;
