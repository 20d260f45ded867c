import { type FSWatcher, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { ConfigError } from './config-error.js';
import { parseConfig } from './load.js';
import { isInlinePolicy, isInlineXsd } from './policy-source.js';

/**
 * Every file a configuration depends on: the file itself, its policy documents (global, products, APIs,
 * operations, fragments; inline XML is not a file), its schema registry's files, its definition files and the files
 * those reach through relative `$ref`s, and the trusted CA file of each backend entity (`backends[].tls.trustedCa`:
 * one file, so an edit is whole; a certificate and its key, written as two files, are read again on SIGHUP instead,
 * never half-rotated). Reads only the configuration (no policy is compiled), so it still answers when a policy or a
 * definition is broken — the watcher must keep watching exactly the file that needs fixing. `text`: the
 * configuration's text when it is already read (or not written yet).
 */
export async function referencedFiles(configFile: string, text?: string): Promise<string[]> {
  const file = path.resolve(configFile);
  const directory = path.dirname(file);
  const files = new Set([file]);
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(text ?? (await readFile(file, 'utf8')), file);
  } catch (error) {
    if (error instanceof ConfigError || (error as NodeJS.ErrnoException).code === 'ENOENT') return [...files];
    throw error;
  }
  const policy = (value: string | undefined) => {
    if (value !== undefined && !isInlinePolicy(value)) files.add(path.resolve(directory, value));
  };
  policy(config.policy);
  for (const value of Object.values(config.fragments)) policy(value);
  // The schema registry's files (a schema written in place is part of the configuration).
  for (const value of Object.values(config.schemas))
    if (typeof value === 'string' && !isInlineXsd(value)) files.add(path.resolve(directory, value));
  for (const product of config.products) policy(product.policy);
  for (const api of config.apis) {
    policy(api.policy);
    for (const operation of api.operations) policy(operation.policy);
    if (api.definition) await addDefinitionFiles(path.resolve(directory, api.definition.file), files);
    if (api.graphql) files.add(path.resolve(directory, api.graphql.schema));
  }
  for (const backend of config.backends)
    if (backend.tls?.trustedCa !== undefined) files.add(path.resolve(directory, backend.tls.trustedCa));
  return [...files].sort();
}

/** A definition file and, for JSON/YAML ones, the files its relative `$ref`s name (transitively). */
async function addDefinitionFiles(file: string, files: Set<string>): Promise<void> {
  if (files.has(file)) return;
  files.add(file);
  if (!/\.(ya?ml|json)$/i.test(file)) return;
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return;
  const references: string[] = [];
  collectRefs(parseDocument(text).contents, references);
  for (const reference of references) {
    const target = reference.split('#')[0]!;
    // Only local files: a URL is not something a file watcher can see change.
    if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    await addDefinitionFiles(path.resolve(path.dirname(file), target), files);
  }
}

function collectRefs(node: unknown, into: string[]): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      if (isScalar(pair.key) && pair.key.value === '$ref' && isScalar(pair.value)) {
        if (typeof pair.value.value === 'string') into.push(pair.value.value);
      } else collectRefs(pair.value, into);
    }
  } else if (isSeq(node)) {
    for (const item of node.items) collectRefs(item, into);
  }
}

/**
 * Calls `onChange` once a burst of changes to any of the watched files has settled for `debounceMs`. Watches
 * the folders rather than the files: editors save by writing a new file and renaming it over the old one, which
 * a watch on the old file's inode would never see.
 */
export class FileSetWatcher {
  private readonly watchers = new Map<string, FSWatcher>();
  private files = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly onChange: () => void,
    private readonly debounceMs = 200,
  ) {}

  /** Watches exactly these files from now on (absolute paths). */
  watch(files: readonly string[]): void {
    this.files = new Set(files.map((file) => path.resolve(file)));
    const directories = new Set([...this.files].map((file) => path.dirname(file)));
    for (const [directory, watcher] of this.watchers) {
      if (directories.has(directory)) continue;
      watcher.close();
      this.watchers.delete(directory);
    }
    for (const directory of directories) {
      if (this.watchers.has(directory)) continue;
      try {
        const watcher = watch(directory, { persistent: false }, (_event, name) => {
          if (name === null || this.files.has(path.join(directory, name.toString()))) this.schedule();
        });
        // A folder that goes away (or cannot be watched) is not fatal: the next reload watches again.
        watcher.on('error', () => {
          watcher.close();
          this.watchers.delete(directory);
        });
        this.watchers.set(directory, watcher);
      } catch {
        // The folder does not exist (yet): a configuration naming a missing file is reported by the reload.
      }
    }
  }

  watched(): string[] {
    return [...this.files].sort();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.onChange();
    }, this.debounceMs);
  }
}
