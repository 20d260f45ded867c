import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parse, stringify } from 'yaml';
import { exportApiops, mergeOverrides, planOverFolder } from '../../catalog/apiops/index.js';
import { parseConfig } from '../../config/load.js';
import { isInlinePolicy } from '../../config/policy-source.js';
import { writeFindings } from '../apiops-report.js';
import { type CliCommand, InputError, UsageError } from '../command.js';

/** A file the configuration names, relative to it; a missing one is the configuration's mistake, said plainly. */
function namedFile(directory: string, relative: string, what: string): string {
  const file = path.resolve(directory, relative);
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(
      `${what} "${relative}": cannot read ${file} (${(error as NodeJS.ErrnoException).code})`,
    );
  }
}

export const command: CliCommand = {
  usage:
    'portcullis export apiops DIR [--config GATEWAY.yaml] [--overrides configuration.ENV.yaml] [--secrets FILE]\n' +
    '  Writes the gateway file (default gateway.yaml) as APIOps artifacts into DIR, the layout the API Management\n' +
    '  extractor writes and its publisher reads. Into a DIR that holds artifacts already (the folder the gateway\n' +
    '  was imported from), what the gateway does not model is kept, and the base artifacts keep their service URLs\n' +
    "  and named values: this environment's differing values go into the --overrides file, as APIOps keeps them\n" +
    '  (refused without one). Secret named values and subscription keys never go into DIR: they go into the\n' +
    '  --overrides (or --secrets) file, for `import apiops --overrides`.',
  async run(args) {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { config: { type: 'string' }, secrets: { type: 'string' }, overrides: { type: 'string' } },
    });
    const [format, directory, ...extra] = positionals;
    if (format !== 'apiops') throw new UsageError('give the format first: apiops');
    if (directory === undefined) throw new UsageError('give the folder to write the artifacts into');
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (values.overrides !== undefined && values.secrets !== undefined)
      throw new UsageError(
        'give --overrides or --secrets, not both: the overrides file holds the secrets too',
      );
    const file = path.resolve(values.config ?? 'gateway.yaml');
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new InputError(`--config ${file}: cannot read the file (${error.code ?? error.message})`);
    });
    const parsed = parseConfig(text, file);
    const config = { ...parsed, apis: parsed.apis.map((api) => ({ ...api, type: api.type })) };
    const beside = path.dirname(file);
    const exported = exportApiops(config, {
      policyText: (source) => (isInlinePolicy(source) ? source : namedFile(beside, source, 'policy')),
      fileText: (relative) => namedFile(beside, relative, 'definition'),
    });

    const root = path.resolve(directory);
    const plan = planOverFolder(exported.files, (relative) => {
      const target = path.join(root, relative);
      return existsSync(target) ? readFileSync(target, 'utf8') : undefined;
    });
    const shownRoot = path.relative(process.cwd(), root) || root;
    if (plan.refused.length > 0)
      throw new InputError(
        `nothing written: exporting into ${shownRoot} would lose what these files hold\n${plan.refused.map((line) => `  ${line}`).join('\n')}`,
      );
    const environmentCount = [...plan.environment.values()].reduce((sum, list) => sum + list.length, 0);
    if (environmentCount > 0 && values.overrides === undefined)
      throw new InputError(
        `nothing written: these values differ from the artifacts in ${shownRoot} (another environment's, e.g. imported with --overrides); ` +
          'give --overrides configuration.<env>.yaml to keep them there, as APIOps does, instead of in the base artifacts\n' +
          [...plan.environment]
            .flatMap(([section, list]) =>
              list.map((entry) => `  ${section}/${entry.name}: ${Object.keys(entry.properties).join(', ')}`),
            )
            .join('\n'),
      );

    for (const [relative, content] of plan.files) {
      const target = path.join(root, relative);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content, 'utf8');
    }
    const findings = [...exported.findings];
    const secretCount = [...exported.secrets.values()].reduce((sum, list) => sum + list.length, 0);
    const overridesFile = values.overrides ?? values.secrets;
    const sections = new Map([...plan.environment]);
    for (const [section, list] of exported.secrets)
      sections.set(section, [...(sections.get(section) ?? []), ...list]);
    if (values.overrides !== undefined && sections.size > 0) {
      const target = path.resolve(values.overrides);
      const held = existsSync(target) ? parse(readFileSync(target, 'utf8')) : undefined;
      await writeFile(target, stringify(mergeOverrides(held, sections)), { encoding: 'utf8', mode: 0o600 });
    } else if (values.secrets !== undefined && secretCount > 0) {
      await writeFile(path.resolve(values.secrets), stringify(Object.fromEntries(exported.secrets)), {
        encoding: 'utf8',
        mode: 0o600,
      });
    } else {
      for (const [section, list] of exported.secrets) {
        for (const entry of list) {
          findings.push({
            file: `${section === 'namedValues' ? 'named values' : section}/${entry.name}`,
            kind: 'skipped',
            message: `${Object.keys(entry.properties).join(', ')}: secret, not written (give --overrides FILE to write it there)`,
          });
        }
      }
    }
    writeFindings(findings);
    for (const line of plan.carried)
      process.stdout.write(`kept from ${shownRoot} (not modelled by the gateway): ${line}\n`);
    const overridden = environmentCount + (overridesFile === undefined ? 0 : secretCount);
    process.stdout.write(
      `wrote ${plan.files.size} files into ${shownRoot}` +
        (overridesFile !== undefined && overridden > 0
          ? `, ${overridden} values into ${overridesFile}`
          : '') +
        '\n',
    );
    return 0;
  },
};
