import { FileSetWatcher, referencedFiles } from '../config/watch.js';
import type { Exchange, ExchangeFactory } from '../extproc/exchange.js';

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
