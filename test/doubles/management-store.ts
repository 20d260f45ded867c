import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../src/config/config-error.js';
import { compileGateway, GatewayLoadError } from '../../src/config/gateway.js';
import { loadConfigText } from '../../src/config/load.js';
import { changedFiles, type FileTexts, readConfigFiles, replaceFiles } from '../../src/config/snapshot.js';
import type {
  ChangeOutcome,
  ChangeProgress,
  ManagedConfiguration,
  RunningConfiguration,
} from '../../src/management/store.js';

export interface ManagementStoreOptions {
  /**
   * Whether a change "restarts Envoy" (as GatewayReload does when the bootstrap changes): the store calls
   * `progress.restarting()` once the files are written, then waits for `release` before the change is applied.
   */
  readonly restarts?: (candidate: FileTexts, running: FileTexts) => boolean;
  /** What a restarting change waits for; the default goes on at once. */
  readonly release?: () => Promise<void>;
}

/**
 * A ManagedConfiguration over a temporary folder, as GatewayReload is minus Envoy and the engines: a change is
 * refused (409) when made from another generation or when the disk is not what runs, validated whole with the
 * gateway's own loader and compiler (400 with every problem), written atomically, then read back.
 */
export class TestManagementStore implements ManagedConfiguration {
  private current: RunningConfiguration;

  private constructor(
    readonly directory: string,
    readonly file: string,
    current: RunningConfiguration,
    private readonly options: ManagementStoreOptions,
  ) {
    this.current = current;
  }

  /** `files`: the configuration (`gateway.yaml`) and the policy files beside it, by relative path. */
  static async create(
    files: Readonly<Record<string, string>>,
    options: ManagementStoreOptions = {},
  ): Promise<TestManagementStore> {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-management-'));
    for (const [name, text] of Object.entries(files)) {
      const file = path.join(directory, name);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, text);
    }
    const file = path.join(directory, 'gateway.yaml');
    const texts = await readConfigFiles(file);
    const loaded = await loadConfigText(texts.get(file) ?? '', file, texts);
    compileGateway(loaded);
    return new TestManagementStore(
      directory,
      file,
      { file, texts, config: loaded.config, generation: 1 },
      options,
    );
  }

  running(): RunningConfiguration {
    return this.current;
  }

  /** The path of a file of the configuration's folder. */
  path(name: string): string {
    return path.join(this.directory, name);
  }

  async change(files: FileTexts, basedOn?: number, progress?: ChangeProgress): Promise<ChangeOutcome> {
    if (basedOn !== undefined && basedOn !== this.current.generation) {
      return refused(
        409,
        'the configuration changed while this change was prepared; read it again and retry',
      );
    }
    const disk = await readConfigFiles(this.file);
    const differing = changedFiles(disk, this.current.texts);
    if (differing.length > 0) {
      return refused(
        409,
        'the configuration files on disk are not the ones running',
        differing.map((file) => `${file}: differs from the running configuration`),
      );
    }
    const candidate = new Map(this.current.texts);
    for (const [file, text] of files) candidate.set(file, text);
    let config: RunningConfiguration['config'];
    try {
      const loaded = await loadConfigText(candidate.get(this.file) ?? '', this.file, candidate);
      compileGateway(loaded);
      config = loaded.config;
    } catch (error) {
      if (!(error instanceof ConfigError || error instanceof GatewayLoadError)) throw error;
      return refused(400, 'the configuration is invalid; nothing changed', error.message.split('\n'));
    }
    await replaceFiles(files);
    if (this.options.restarts?.(candidate, this.current.texts)) {
      progress?.restarting?.();
      await this.options.release?.();
    }
    const texts = await readConfigFiles(this.file);
    this.current = { file: this.file, texts, config, generation: this.current.generation + 1 };
    return { ok: true, generation: this.current.generation };
  }

  async dispose(): Promise<void> {
    await rm(this.directory, { recursive: true, force: true });
  }
}

function refused(
  status: 400 | 409 | 503,
  message: string,
  problems: readonly string[] = [],
): ChangeOutcome & { ok: false } {
  return { ok: false, status, message, problems };
}
