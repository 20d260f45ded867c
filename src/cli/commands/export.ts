import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { exportApiops } from '../../catalog/apiops/index.js';
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
    'portcullis export apiops DIR [--config GATEWAY.yaml] [--secrets configuration.secrets.yaml]\n' +
    '  Writes the gateway file (default gateway.yaml) as APIOps artifacts into DIR, the layout the API Management\n' +
    '  extractor writes and its publisher reads. Secret named values and subscription keys never go into DIR:\n' +
    '  with --secrets they are written there, as an overrides file for `import apiops --overrides`.',
  async run(args) {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { config: { type: 'string' }, secrets: { type: 'string' } },
    });
    const [format, directory, ...extra] = positionals;
    if (format !== 'apiops') throw new UsageError('give the format first: apiops');
    if (directory === undefined) throw new UsageError('give the folder to write the artifacts into');
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const file = path.resolve(values.config ?? 'gateway.yaml');
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new InputError(`--config ${file}: cannot read the file (${error.code ?? error.message})`);
    });
    const parsed = parseConfig(text, file);
    // An MCP server API's artifacts (API Management's type MCP) are not written yet: listed as skipped below.
    const mcpApis = parsed.apis.filter((api) => api.type === 'mcp');
    const config = {
      ...parsed,
      apis: parsed.apis.flatMap((api) => (api.type === 'mcp' ? [] : [{ ...api, type: api.type }])),
    };
    const beside = path.dirname(file);
    const exported = exportApiops(config, {
      policyText: (source) => (isInlinePolicy(source) ? source : namedFile(beside, source, 'policy')),
      fileText: (relative) => namedFile(beside, relative, 'definition'),
    });

    const root = path.resolve(directory);
    for (const [relative, content] of exported.files) {
      const target = path.join(root, relative);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content, 'utf8');
    }
    const findings = [
      ...exported.findings,
      ...mcpApis.map((api) => ({
        file: `apis/${api.id}`,
        kind: 'skipped' as const,
        message: 'an MCP server API (type mcp): not carried to APIOps artifacts yet',
      })),
    ];
    const secretCount = [...exported.secrets.values()].reduce((sum, list) => sum + list.length, 0);
    if (values.secrets !== undefined && secretCount > 0) {
      const sections = Object.fromEntries(exported.secrets);
      await writeFile(path.resolve(values.secrets), stringify(sections), { encoding: 'utf8', mode: 0o600 });
    } else {
      for (const [section, list] of exported.secrets) {
        for (const entry of list) {
          findings.push({
            file: `${section === 'namedValues' ? 'named values' : section}/${entry.name}`,
            kind: 'skipped',
            message: `${Object.keys(entry.properties).join(', ')}: secret, not written (give --secrets FILE to write it there)`,
          });
        }
      }
    }
    writeFindings(findings);
    process.stdout.write(
      `wrote ${exported.files.size} files into ${path.relative(process.cwd(), root) || root}` +
        (values.secrets !== undefined && secretCount > 0
          ? `, ${secretCount} secrets into ${values.secrets}`
          : '') +
        '\n',
    );
    return 0;
  },
};
