/**
 * Where a configuration's policy value (`policy:` of the gateway, a product, an API, an operation; a fragment) puts
 * its document: written in place as XML, or the name of a file beside the configuration.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileText, formatPath, type LoadedConfig } from './load.js';

/** Whether the value is the document itself rather than a file's name. */
export function isInlinePolicy(value: string): boolean {
  return value.trimStart().startsWith('<');
}

/**
 * Whether a schema registry value (`schemas:`) is an XML schema written in place rather than a file's name: the same
 * test as a policy's (XML starts with `<`, a file name never does).
 */
export const isInlineXsd = isInlinePolicy;

export interface PolicySource {
  /**
   * The name the document goes by in diagnostics, traces and coverage: its file, or for one written in place the
   * configuration file and the key holding it (`gateway.yaml (apis[0].policy)`).
   */
  readonly file: string;
  readonly inline: boolean;
  /** The document's text: a file the management API is writing first, else the file on disk; undefined if absent. */
  readonly text: string | undefined;
}

export function policySource(
  loaded: LoadedConfig,
  keys: readonly (string | number)[],
  value: string,
): PolicySource {
  if (isInlinePolicy(value))
    return { file: `${loaded.file} (${formatPath(keys)})`, inline: true, text: value };
  const file = path.resolve(loaded.directory, value);
  const text = fileText(loaded.files, file) ?? (existsSync(file) ? readFileSync(file, 'utf8') : undefined);
  return { file, inline: false, text };
}
