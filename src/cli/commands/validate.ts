import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { compileGateway, GatewayLoadError } from '../../config/gateway.js';
import { ConfigError, formatProblem, loadConfigFile } from '../../config/load.js';
import { formatDiagnostic } from '../../policy/diagnostics.js';
import { SCOPES, type Scope } from '../../policy/schema.js';
import type { NamedValue } from '../../policy/source.js';
import { validatePolicies } from '../../policy/validate.js';
import { type CliCommand, UsageError } from '../command.js';

/**
 * Named values file: a YAML map of name → value, or name → { value, secret }. Secret values never appear in
 * messages.
 */
async function readNamedValues(file: string): Promise<Map<string, NamedValue>> {
  const data: unknown = parseYaml(await readFile(file, 'utf8'));
  const out = new Map<string, NamedValue>();
  if (data === null || data === undefined) return out;
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new UsageError(`${file}: named values must be a map of name → value`);
  }
  for (const [name, entry] of Object.entries(data)) {
    if (typeof entry === 'string' || typeof entry === 'number' || typeof entry === 'boolean') {
      out.set(name, { value: String(entry) });
    } else if (entry !== null && typeof entry === 'object' && 'value' in entry) {
      const e = entry as { value: unknown; secret?: unknown };
      out.set(name, { value: String(e.value), secret: e.secret === true });
    } else {
      throw new UsageError(`${file}: named value "${name}" must be a string or { value, secret }`);
    }
  }
  return out;
}

/** Loads a gateway configuration and compiles every policy it names, as the engine would at start. */
async function configurationErrors(file: string): Promise<string[]> {
  try {
    compileGateway(await loadConfigFile(file));
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatProblem);
    if (error instanceof GatewayLoadError) return [...error.problems];
    throw error;
  }
}

export const command: CliCommand = {
  name: 'validate',
  summary: 'check gateway configurations and policy documents (file:line:col messages, exit 1 on any error)',
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
    const configurationProblems = await Promise.all(
      positionals.filter(isConfiguration).map(configurationErrors),
    );
    for (const problem of configurationProblems.flat()) process.stdout.write(`${problem}\n`);
    const inputs = await Promise.all(
      positionals
        .filter((file) => !isConfiguration(file))
        .map(async (file) => ({ file, text: await readFile(file, 'utf8') })),
    );
    const diagnostics = validatePolicies(inputs, {
      scope: scope as Scope,
      ...(namedValues === undefined ? {} : { namedValues }),
    });
    for (const d of diagnostics) process.stdout.write(`${formatDiagnostic(d)}\n`);
    return diagnostics.length > 0 || configurationProblems.flat().length > 0 ? 1 : 0;
  },
};
