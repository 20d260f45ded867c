import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { bootstrapYaml } from '../../config/envoy.js';
import { loadConfigFile } from '../../config/load.js';
import { planRuntime, planSidecar, UnknownSidecarError } from '../../config/plan.js';
import { buildSidecarBootstrap } from '../../envoy/sidecar.js';
import { buildEnvoySnippet } from '../../envoy/snippet.js';
import { type CliCommand, UsageError } from '../command.js';

export const command: CliCommand = {
  usage:
    'portcullis envoy-config --config FILE [--sidecar BACKEND | --snippet [--engine-socket PATH]]   (--snippet: only what to paste into your own Envoy)',
  async run(args) {
    const { values } = parseArgs({
      args: [...args],
      options: {
        config: { type: 'string' },
        sidecar: { type: 'string' },
        snippet: { type: 'boolean', default: false },
        'engine-socket': { type: 'string' },
      },
    });
    if (!values.config) throw new UsageError('--config is required');
    if (values.snippet && values.sidecar !== undefined)
      throw new UsageError('--snippet and --sidecar exclude each other');
    if (values['engine-socket'] !== undefined && !values.snippet)
      throw new UsageError('--engine-socket goes with --snippet');
    const { config, directory } = await loadConfigFile(values.config);
    if (values.snippet) {
      const plan = await planRuntime(config, { directory });
      const socketPath = values['engine-socket'];
      const snippet = buildEnvoySnippet(
        socketPath !== undefined ? { ...plan, engine: { ...plan.engine, socketPath } } : plan,
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

const snippetIntroduction = `# Paste into your Envoy (see docs/your-own-envoy.md):
#   http_filters: into your HTTP connection manager, before envoy.filters.http.router, in this order.
#   routes: first in every virtual host that serves an API; name each API's own route "portcullis:<api id>"
#     (the engine then picks that API whatever the host), or leave it to the host and URL suffix.
#   clusters: into static_resources.clusters.
`;
