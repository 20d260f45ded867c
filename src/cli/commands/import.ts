import { readFile, rename, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { isMap, isSeq, parseDocument, stringify, YAMLSeq } from 'yaml';
import { ImportError, type ImportedApi, importDefinition, importers } from '../../catalog/importers/index.js';
import { ConfigError } from '../../config/config-error.js';
import { parseConfig } from '../../config/load.js';
import { apiSchema } from '../../config/schema.js';
import { issueWording } from '../../config/wording.js';
import { type CliCommand, InputError, UsageError } from '../command.js';
import { usage as apiopsUsage, importApiopsCommand } from './import-apiops.js';

type Entry = Record<string, unknown>;

/**
 * The imported API as a configuration `apis:` entry. Whatever the configuration schema does not accept (yet) is
 * left out and named on stderr, so the entry always validates; once the schema takes a field, it flows through.
 */
function configEntry({ notes: _notes, xmlSchemas: _xmlSchemas, ...api }: ImportedApi): {
  entry: Entry;
  dropped: string[];
} {
  const entry = structuredClone(api) as unknown as Entry;
  const dropped = new Set<string>();
  // Each round removes the unknown keys zod reported; nested objects may reveal more in the next round.
  for (let round = 0; round < 8; round++) {
    const result = apiSchema.safeParse(entry);
    if (result.success) break;
    const unknown = result.error.issues.filter((issue) => issue.code === 'unrecognized_keys');
    if (unknown.length === 0) break;
    for (const issue of unknown) {
      let holder: unknown = entry;
      for (const key of issue.path) holder = (holder as Record<PropertyKey, unknown>)[key as PropertyKey];
      for (const key of issue.keys) {
        delete (holder as Entry)[key];
        dropped.add([...issue.path.filter((step) => typeof step === 'string'), key].join('.'));
      }
    }
  }
  return { entry: compact(entry), dropped: [...dropped].sort() };
}

/** On re-import, what the operator added by hand (policies, host names) stays: the definition has none. */
function keepLocalSettings(entry: Entry, previous: Entry): Entry {
  const { operations, ...head } = entry;
  const kept: Entry = { ...head };
  for (const key of ['hostnames', 'policy'] as const) {
    if (previous[key] !== undefined && kept[key] === undefined) kept[key] = previous[key];
  }
  const previousOperations = Array.isArray(previous.operations) ? (previous.operations as Entry[]) : [];
  kept.operations = (operations as Entry[]).map((operation) => {
    const before = previousOperations.find((candidate) => candidate.id === operation.id);
    return before?.policy !== undefined ? { ...operation, policy: before.policy } : operation;
  });
  return kept;
}

/** Leaves out what the schema defaults anyway (empty lists, `required: false`), so the entry reads well. */
function compact(entry: Entry): Entry {
  const operations = (entry.operations as Entry[]).map((operation) => {
    const out: Entry = {};
    for (const [key, value] of Object.entries(operation)) {
      if (Array.isArray(value) && value.length === 0) continue;
      out[key] =
        key === 'queryParameters' || key === 'headerParameters'
          ? (value as Entry[]).map(({ required, ...rest }) => (required ? { ...rest, required } : rest))
          : value;
    }
    return out;
  });
  return { ...entry, operations };
}

/**
 * Adds or replaces (same id) the API in the gateway file, keeping its comments and layout; a file that does not
 * exist yet is created holding just this API (the start of a new gateway).
 */
async function writeIntoConfig(file: string, entry: Entry): Promise<'added' | 'replaced' | 'created'> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new InputError(`--config ${file}: cannot read the file (${error.code ?? error.message})`);
  });
  if (text === undefined) {
    const created = stringify({ apis: [entry] });
    parseConfig(created, file);
    // `wx`: never over a file that appeared in the meantime.
    await writeFile(file, created, { encoding: 'utf8', flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
      throw new InputError(`--config ${file}: cannot create the file (${error.code ?? error.message})`);
    });
    return 'created';
  }
  // The file must be valid before we touch it: an error afterwards would otherwise look like ours.
  parseConfig(text, file);
  const document = parseDocument(text);
  let apis = document.get('apis', true);
  if (!isSeq(apis) || (apis.flow && apis.items.length === 0)) {
    apis = new YAMLSeq();
    document.set('apis', apis);
  }
  const sequence = apis as YAMLSeq;
  const index = sequence.items.findIndex((item) => isMap(item) && item.get('id') === entry.id);
  const previous = index >= 0 ? (sequence.items[index] as { toJSON(): Entry }).toJSON() : undefined;
  const node = document.createNode(previous ? keepLocalSettings(entry, previous) : entry);
  if (index >= 0) sequence.items[index] = node;
  else sequence.items.push(node);
  const updated = document.toString();
  // The whole file is validated as `up` would load it: a duplicate URL suffix, for one, is refused here.
  parseConfig(updated, file);
  // Written next to it and renamed, so the gateway never sees a half-written file.
  const temporary = `${file}.import-${process.pid}.tmp`;
  await writeFile(temporary, updated, 'utf8');
  await rename(temporary, file);
  return index >= 0 ? 'replaced' : 'added';
}

export const command: CliCommand = {
  usage: `portcullis import ${[...importers.keys()].join('|')} FILE --suffix URL-SUFFIX [--api-id ID] [--service-url URL] [--config GATEWAY.yaml]\n${apiopsUsage}`,
  async run(args) {
    // A whole API Management instance rather than one definition: its own options.
    if (args[0] === 'apiops') return importApiopsCommand.run(args.slice(1));
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        suffix: { type: 'string' },
        'api-id': { type: 'string' },
        'service-url': { type: 'string' },
        config: { type: 'string' },
      },
    });
    const [format, file, ...extra] = positionals;
    if (format === undefined || !importers.has(format)) {
      throw new UsageError(`give the format first: ${[...importers.keys(), 'apiops'].join(', ')}`);
    }
    if (file === undefined) throw new UsageError('give the definition file');
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (values.suffix === undefined)
      throw new UsageError('--suffix is required (where the API is published)');

    let api: ImportedApi;
    try {
      api = await importDefinition(format, file, {
        urlSuffix: values.suffix,
        ...(values['api-id'] === undefined ? {} : { apiId: values['api-id'] }),
        ...(values['service-url'] === undefined ? {} : { serviceUrl: values['service-url'] }),
      });
    } catch (error) {
      if (!(error instanceof ImportError)) throw error;
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    for (const note of api.notes ?? []) process.stderr.write(`portcullis import: ${file}: ${note}\n`);
    if (api.operations.length === 0)
      process.stderr.write(
        `portcullis import: ${file} declares no operations: the API is imported with none, and every call to it gets 404 until it has some\n`,
      );
    const { entry, dropped } = configEntry(api);
    if (dropped.length > 0) {
      process.stderr.write(
        `portcullis import: not in the configuration schema, left out: ${dropped.join(', ')}\n`,
      );
    }
    const checked = apiSchema.safeParse(entry, { error: issueWording });
    if (!checked.success) {
      for (const issue of checked.error.issues) {
        process.stderr.write(`${file}: apis entry ${issue.path.join('.')}: ${issue.message}\n`);
      }
      return 1;
    }
    if (values.config === undefined) {
      process.stdout.write(stringify({ apis: [entry] }));
      return 0;
    }
    try {
      const outcome = await writeIntoConfig(values.config, entry);
      const what = `API "${api.id}" (${api.operations.length} operations)`;
      process.stdout.write(
        outcome === 'created'
          ? `created ${values.config} with ${what}\n`
          : `${outcome} ${what} in ${values.config}\n`,
      );
      return 0;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
  },
};
