import type { GatewayConfig } from '../config/schema.js';
import type { FileTexts } from '../config/snapshot.js';

/** The configuration a gateway runs: its file, and the texts of it and of the files it references. */
export interface RunningConfiguration {
  /** Absolute path of the gateway configuration file. */
  readonly file: string;
  readonly texts: FileTexts;
  /** The configuration as it runs (defaults applied, definitions expanded, the ports it got). */
  readonly config: GatewayConfig;
  /** Counts the configurations applied since start; moves with every change, from any source. */
  readonly generation: number;
}

export type ChangeOutcome =
  | { readonly ok: true; readonly generation: number }
  | {
      readonly ok: false;
      /** 400: the change is invalid; 409: the files on disk are not what runs; 503: Envoy could not take it. */
      readonly status: 400 | 409 | 503;
      readonly message: string;
      /** One line per problem, each `file:line:col: path: message` where the problem has a place. */
      readonly problems: readonly string[];
    };

/**
 * What the management API changes: the running configuration. A change is validated whole (configuration,
 * policies, Envoy's bootstrap), written, and applied to the running gateway before `change` resolves; a change that
 * fails anywhere leaves the files and the gateway as they were.
 */
export interface ManagedConfiguration {
  running(): RunningConfiguration;
  /**
   * New texts for some files (absolute paths), the others unchanged. `basedOn`: the generation the change was
   * made from; when another configuration was applied since, the change is refused (409) rather than undoing it.
   */
  change(files: FileTexts, basedOn?: number, progress?: ChangeProgress): Promise<ChangeOutcome>;
}

export interface ChangeProgress {
  /**
   * The change is valid and written, and Envoy is about to be hot-restarted to apply it: connections to the
   * current Envoy close once the next one has taken over.
   */
  restarting?(): void;
}
