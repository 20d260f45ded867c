import { parseArgs } from 'node:util';
import { bootstrapYaml } from '../../config/envoy.js';
import { loadConfigFile } from '../../config/load.js';
import { planRuntime } from '../../config/plan.js';
import { type CliCommand, UsageError } from '../command.js';

export const command: CliCommand = {
  name: 'envoy-config',
  summary: 'print the Envoy bootstrap that `up` would use',
  usage: 'portcullis envoy-config --config FILE',
  async run(args) {
    const { values } = parseArgs({ args: [...args], options: { config: { type: 'string' } } });
    if (!values.config) throw new UsageError('--config is required');
    const { config } = await loadConfigFile(values.config);
    // Ports left at 0 ("any free port") are decided now, as `up` would decide them.
    process.stdout.write(bootstrapYaml(await planRuntime(config)));
    return 0;
  },
};
