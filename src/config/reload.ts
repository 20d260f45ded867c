import { type FSWatcher, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import type { Exchange, ExchangeFactory } from '../extproc/exchange.js';
import { ConfigError, parseConfig } from './load.js';

/**
 * Every file a configuration depends on: the file itself, its policy documents (global, products, APIs,
 * operations, fragments; inline XML is not a file), its definition files and the files those reach through
 * relative `$ref`s. Reads only the configuration (no policy is compiled), so it still answers when a policy or a
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
    if (value !== undefined && !value.trimStart().startsWith('<')) files.add(path.resolve(directory, value));
  };
  policy(config.policy);
  for (const value of Object.values(config.fragments)) policy(value);
  for (const product of config.products) policy(product.policy);
  for (const api of config.apis) {
    policy(api.policy);
    for (const operation of api.operations) policy(operation.policy);
    if (api.definition) await addDefinitionFiles(path.resolve(directory, api.definition.file), files);
  }
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

/** What a reloadable engine holds: the exchanges of one compiled configuration, and how to let it go. */
export interface EngineGeneration {
  readonly exchanges: ExchangeFactory;
  /** Called once no exchange of this generation is open any more, after it was replaced. */
  close(): Promise<void>;
}

/**
 * An exchange factory whose configuration can be replaced while it serves. Each exchange stays with the
 * generation it was created by until it ends (requests in flight finish on the pipeline they started on); a
 * replaced generation is closed when its last exchange ends.
 */
export class SwappableExchanges<G extends EngineGeneration> {
  private live: { generation: G; open: number; retired: boolean };

  constructor(first: G) {
    this.live = { generation: first, open: 0, retired: false };
  }

  get current(): G {
    return this.live.generation;
  }

  readonly exchanges: ExchangeFactory = () => {
    const slot = this.live;
    const exchange: Exchange = slot.generation.exchanges();
    slot.open++;
    const end = exchange.end?.bind(exchange);
    let ended = false;
    exchange.end = () => {
      end?.();
      if (ended) return;
      ended = true;
      slot.open--;
      if (slot.retired && slot.open === 0) void slot.generation.close();
    };
    return exchange;
  };

  /** New exchanges use `next` from now on; the previous generation closes once its open exchanges have ended. */
  swap(next: G): void {
    const previous = this.live;
    this.live = { generation: next, open: 0, retired: false };
    previous.retired = true;
    if (previous.open === 0) void previous.generation.close();
  }
}

export type ReloadOutcome =
  | { readonly ok: true; readonly generation: number }
  | { readonly ok: false; readonly errors: string };

/**
 * Loads and compiles the configuration again and, when that works, swaps it in. Reloads never overlap: a change
 * noticed while one runs starts another once it is done, so the last change always wins.
 */
export class ConfigReloader<G extends EngineGeneration> {
  private generation = 1;
  private running: Promise<ReloadOutcome> | undefined;
  private again = false;
  private readonly watcher: FileSetWatcher | undefined;

  constructor(
    private readonly configFile: string,
    private readonly target: SwappableExchanges<G>,
    private readonly build: (configFile: string) => Promise<G>,
    private readonly report: (outcome: ReloadOutcome) => void,
    options: { readonly watch: boolean; readonly debounceMs?: number },
  ) {
    this.watcher = options.watch
      ? new FileSetWatcher(() => void this.reload(), options.debounceMs)
      : undefined;
  }

  /** Starts watching the configuration's files (when asked to). */
  async start(): Promise<void> {
    this.watcher?.watch(await referencedFiles(this.configFile));
  }

  watched(): string[] {
    return this.watcher?.watched() ?? [];
  }

  reload(): Promise<ReloadOutcome> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.attempt().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        void this.reload();
      }
    });
    return this.running;
  }

  close(): void {
    this.watcher?.close();
  }

  private async attempt(): Promise<ReloadOutcome> {
    let outcome: ReloadOutcome;
    try {
      const next = await this.build(this.configFile);
      this.target.swap(next);
      outcome = { ok: true, generation: ++this.generation };
    } catch (error) {
      outcome = { ok: false, errors: error instanceof Error ? error.message : String(error) };
    }
    // The new configuration may name other files (a policy added, a definition moved): watch those now.
    this.watcher?.watch(await referencedFiles(this.configFile));
    this.report(outcome);
    return outcome;
  }
}
