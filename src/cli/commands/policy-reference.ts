import { parseArgs } from 'node:util';
import { policyReference, policyReferenceData } from '../../policy/reference.js';
import { type CliCommand, UsageError } from '../command.js';

/** How the reference is printed: Markdown for people (docs/policy-reference.md), JSON for tools. */
const FORMATS: Readonly<Record<string, () => string>> = {
  md: policyReference,
  json: () => `${JSON.stringify(policyReferenceData(), null, 2)}\n`,
};

export const command: CliCommand = {
  usage: 'portcullis policy-reference [--format md|json]   (docs/policy-reference.md is the Markdown)',
  async run(args) {
    const { values } = parseArgs({ args: [...args], options: { format: { type: 'string', default: 'md' } } });
    const render = Object.hasOwn(FORMATS, values.format) ? FORMATS[values.format] : undefined;
    if (render === undefined) {
      throw new UsageError(
        `--format must be one of ${Object.keys(FORMATS).join(', ')}, got "${values.format}"`,
      );
    }
    process.stdout.write(render());
    return 0;
  },
};
