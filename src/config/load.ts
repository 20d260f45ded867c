import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isNode, LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import type { Diagnostic } from '../diagnostic.js';
import { YamlAliasError, yamlData } from '../yaml-data.js';
import { ConfigError } from './config-error.js';
import { type DefinitionSchemas, expandDefinitions } from './definitions.js';
import { expandMcpServers } from './mcp-servers.js';
import { type GatewayConfig, gatewayConfigSchema } from './schema.js';
import { issueWording, saysWhatWasFound } from './wording.js';

// zod compiles each object schema into a function (new Function) on its first parse; a process parses its
// configuration once or twice, so the compile costs more than it saves (loading the example: 72 → 60 ms of CPU).
// Nothing on the request path uses zod.
z.config({ jitless: true });

export interface LoadedConfig {
  readonly file: string;
  /** The folder relative paths in the file are resolved against. */
  readonly directory: string;
  readonly config: GatewayConfig;
  /**
   * Files by absolute path that win over the disk: the documents of a change, validated before anything is
   * written, or the snapshot of the running configuration a child of `up` starts from (config/snapshot.ts).
   */
  readonly files?: FileContents;
  /** The XML schemas of each API's WSDL definition, read with its operations (config/definitions.ts). */
  readonly definitionSchemas: DefinitionSchemas;
}

/** File contents by absolute path: text, or the bytes as read (certificates). */
export type FileContents = ReadonlyMap<string, string | Uint8Array>;

/** The text of `file` when `files` holds it. */
export function fileText(files: FileContents | undefined, file: string): string | undefined {
  const content = files?.get(file);
  return typeof content === 'string' || content === undefined
    ? content
    : Buffer.from(content).toString('utf8');
}

/** The bytes of a file the configuration names: from `files` when it holds it, else from the disk. */
export async function readNamedFile(file: string, files?: FileContents): Promise<Buffer> {
  const content = files?.get(file);
  if (content === undefined) return readFile(file);
  return typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
}

export async function loadConfigFile(file: string): Promise<LoadedConfig> {
  return loadConfigText(await readYamlFile(file), file);
}

/** A YAML file's text, or a ConfigError at its first line saying why it cannot be read. */
export async function readYamlFile(file: string): Promise<string> {
  return readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new ConfigError([
      {
        file,
        line: 1,
        column: 1,
        path: '',
        message: `cannot read the file (${error.code ?? error.message})`,
      },
    ]);
  });
}

/**
 * A configuration from its text, as if read from `file` (relative paths resolve beside it), optionally with
 * policy documents that are not written yet (`files`, by absolute path).
 */
export async function loadConfigText(
  text: string,
  file: string,
  files?: FileContents,
): Promise<LoadedConfig> {
  const directory = path.dirname(path.resolve(file));
  const expanded = await expandDefinitions(parseConfig(text, file), directory);
  const config = expandMcpServers(expanded.config);
  return {
    file,
    directory,
    config,
    definitionSchemas: expanded.definitionSchemas,
    ...(files ? { files } : {}),
  };
}

/** Parses and validates configuration text; throws ConfigError listing every problem found. */
export function parseConfig(text: string, file: string): GatewayConfig {
  return parseYamlWith(gatewayConfigSchema, text, file);
}

/**
 * Parses YAML (or JSON, which is YAML) and validates it with a schema; every problem is located in the text
 * (`file` names it in the messages). Throws ConfigError listing them all.
 */
export function parseYamlWith<T extends z.ZodType>(schema: T, text: string, file: string): z.output<T> {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      document.errors.map((error) => {
        const position = lineCounter.linePos(error.pos[0]);
        return {
          file,
          line: position.line,
          column: position.col,
          path: '',
          message: error.message.split('\n')[0]!,
        };
      }),
    );
  }
  let data: unknown;
  try {
    data = yamlData(document) ?? {};
  } catch (error) {
    if (!(error instanceof YamlAliasError)) throw error;
    throw new ConfigError([{ file, line: 1, column: 1, path: '', message: error.message }]);
  }
  const result = schema.safeParse(data, { reportInput: true, error: issueWording });
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map((issue) => {
      const keys = issuePath(issue);
      const { line, column } = locate(document, lineCounter, keys);
      return { file, line, column, path: formatPath(keys), message: issueMessage(issue) };
    }),
  );
}

function issuePath(issue: z.core.$ZodIssue): (string | number)[] {
  const keys = issue.path.filter((key): key is string | number => typeof key !== 'symbol');
  // Point an unknown key at the key itself, not at the object that holds it.
  if (issue.code === 'unrecognized_keys' && issue.keys.length > 0) keys.push(issue.keys[0]!);
  return keys;
}

/**
 * Keys whose values are credentials or may be secret: an error about one never repeats the value (errors are
 * printed, logged and answered by the management API).
 */
const credentialKeys = new Set([
  'primaryKey',
  'secondaryKey',
  'passwordHash',
  'traceKey',
  'clientSecret',
  'password',
]);

function isCredential(keys: readonly (string | number)[]): boolean {
  const named = keys.filter((key): key is string => typeof key === 'string');
  if (named[0] === 'telemetry' && named.includes('headers')) return true; // a collector's API key
  return named[0] === 'namedValues' || named.some((key) => credentialKeys.has(key));
}

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
  }
  const found = issue.input;
  if (issue.code === 'invalid_type' && found === undefined) return 'is required';
  const hidden =
    found === undefined || (typeof found === 'object' && found !== null) || isCredential(issuePath(issue));
  if (hidden) return issue.message;
  // Our wording of a wrong type says what kind was found ("got a string"); the value follows it.
  if (saysWhatWasFound(issue) && issue.message.includes(', got '))
    return `${issue.message} (${JSON.stringify(found)})`;
  return `${issue.message}, got ${JSON.stringify(found)}`;
}

/**
 * A problem at a key path of a configuration file already loaded, located as the loader locates its own (the key
 * when it exists, else the closest parent): for problems found after loading, such as a signing key file that
 * cannot be read.
 */
export async function problemAt(
  file: string,
  keys: readonly (string | number)[],
  message: string,
): Promise<Diagnostic> {
  return problemInText(await readFile(file, 'utf8').catch(() => ''), file, keys, message);
}

/** A problem at a key path of configuration text (`file` names it), located as the loader locates its own. */
export function problemInText(
  text: string,
  file: string,
  keys: readonly (string | number)[],
  message: string,
): Diagnostic {
  const lineCounter = new LineCounter();
  const { line, column } = locate(parseDocument(text, { lineCounter }), lineCounter, keys);
  return { file, line, column, path: formatPath(keys), message };
}

/** A key path as the messages write it, e.g. `apis[0].serviceUrl`. */
export function formatPath(keys: readonly (string | number)[]): string {
  return keys
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? key : `.${key}`))
    .join('');
}

/** The closest YAML node that exists along the path: a missing key is reported where its parent is. */
function locate(
  document: ReturnType<typeof parseDocument>,
  lineCounter: LineCounter,
  keys: readonly (string | number)[],
): { line: number; column: number } {
  for (let length = keys.length; length >= 0; length--) {
    const prefix = keys.slice(0, length);
    const node = length === 0 ? document.contents : document.getIn(prefix, true);
    // For a key that exists we prefer the key's own position over its value's.
    const keyNode = length > 0 ? findKeyNode(document, prefix) : undefined;
    const target = keyNode ?? node;
    if (isNode(target) && target.range) {
      const position = lineCounter.linePos(target.range[0]);
      return { line: position.line, column: position.col };
    }
  }
  return { line: 1, column: 1 };
}

function findKeyNode(
  document: ReturnType<typeof parseDocument>,
  keys: readonly (string | number)[],
): unknown {
  const parent = keys.length === 1 ? document.contents : document.getIn(keys.slice(0, -1), true);
  const last = keys[keys.length - 1];
  if (
    parent &&
    typeof parent === 'object' &&
    'items' in parent &&
    Array.isArray(parent.items) &&
    typeof last === 'string'
  ) {
    for (const pair of parent.items as { key?: unknown }[]) {
      const key = pair.key;
      if (isNode(key) && 'value' in key && (key as { value: unknown }).value === last) return key;
    }
  }
  return undefined;
}
