import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { checkGatewayFile } from '../../config/gateway.js';
import { parseYamlWith } from '../../config/load.js';
import { formatDiagnostic } from '../../diagnostic.js';
import { SCOPES, type Scope } from '../../policy/schema.js';
import type { NamedValue } from '../../policy/source.js';
import { validatePolicies } from '../../policy/validate.js';
import { type CliCommand, InputError, UsageError } from '../command.js';

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const namedValuesFileSchema = z.record(
  z.string(),
  z.union([scalar, z.object({ value: scalar, secret: z.boolean().optional() }).strict()], {
    message: 'must be a string or { value, secret }',
  }),
);

/**
 * Named values file: a YAML (or JSON) map of name → value, or name → { value, secret }. Secret values never appear
 * in messages; a file that is not such a map is a ConfigError with its line and column.
 */
async function readNamedValues(file: string): Promise<Map<string, NamedValue>> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new InputError(`--named-values ${file}: cannot read the file (${error.code ?? error.message})`);
  });
  const data = parseYamlWith(namedValuesFileSchema, text, file);
  return new Map(
    Object.entries(data).map(([name, entry]): [string, NamedValue] =>
      typeof entry === 'object'
        ? [name, { value: String(entry.value), secret: entry.secret === true }]
        : [name, { value: String(entry) }],
    ),
  );
}

export const command: CliCommand = {
  usage:
    'portcullis validate [--named-values FILE.yaml] [--scope global|product|api|operation] FILE…\n' +
    '  A .yaml/.yml FILE is a gateway configuration: it is checked with every policy it names.',
  async run(args) {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { 'named-values': { type: 'string' }, scope: { type: 'string' } },
    });
    if (positionals.length === 0) throw new UsageError('give at least one policy file');
    const scope = values.scope ?? 'operation';
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw new UsageError(`--scope must be one of ${SCOPES.join(', ')}, got "${scope}"`);
    }
    const namedValues =
      values['named-values'] === undefined ? undefined : await readNamedValues(values['named-values']);
    const isConfiguration = (file: string) => /\.ya?ml$/i.test(file);
    const configurations = await Promise.all(positionals.filter(isConfiguration).map(checkGatewayFile));
    const configurationProblems = configurations.map((checked) => checked.problems);
    for (const problem of configurationProblems.flat()) process.stdout.write(`${problem}\n`);
    // A policy file that cannot be read is reported like any other problem of it, as a configuration file is.
    const unreadable: string[] = [];
    const inputs = (
      await Promise.all(
        positionals
          .filter((file) => !isConfiguration(file))
          .map(async (file) => {
            try {
              return [{ file, text: await readFile(file, 'utf8') }];
            } catch (error) {
              unreadable.push(
                `${file}:1:1: cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
              );
              return [];
            }
          }),
      )
    ).flat();
    for (const problem of unreadable) process.stdout.write(`${problem}\n`);
    const diagnostics = validatePolicies(inputs, {
      scope: scope as Scope,
      ...(namedValues === undefined ? {} : { namedValues }),
    });
    for (const d of diagnostics) process.stdout.write(`${formatDiagnostic(d)}\n`);
    if (diagnostics.length > 0 || unreadable.length > 0 || configurationProblems.flat().length > 0) return 1;
    // Silence on success reads as "did it run at all?": say what was checked.
    const policies =
      inputs.length + configurations.reduce((sum, checked) => sum + checked.policyDocuments, 0);
    process.stdout.write(
      `ok: ${[
        ...(configurations.length > 0 ? [counted(configurations.length, 'configuration')] : []),
        counted(policies, 'policy', 'policies'),
      ].join(', ')}\n`,
    );
    return 0;
  },
};

function counted(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
