import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { bootstrapYaml } from '../../config/envoy.js';
import { loadConfigFile } from '../../config/load.js';
import { planRuntime, planSidecar, UnknownSidecarError } from '../../config/plan.js';
import { buildSidecarBootstrap } from '../../envoy/sidecar.js';
import { type CliCommand, UsageError } from '../command.js';

export const command: CliCommand = {
  usage: 'portcullis envoy-config --config FILE [--sidecar BACKEND]',
  async run(args) {
    const { values } = parseArgs({
      args: [...args],
      options: { config: { type: 'string' }, sidecar: { type: 'string' } },
    });
    if (!values.config) throw new UsageError('--config is required');
    const { config, directory } = await loadConfigFile(values.config);
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
