/**
 * The files `up` gives its Envoys (in its state directory): each Envoy process gets a directory of its own
 * (`envoy-N/`: its bootstrap and the resource files it watches, src/envoy/bootstrap/dynamic-resources.ts), so an
 * Envoy draining after a hot restart keeps reading its own; a change the serving Envoy takes in place rewrites the
 * files of its directory. A bootstrap is validated (`envoy --mode validate`) in the directory an Envoy started on
 * it would get.
 */

import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { renderBootstrap } from '../config/envoy.js';
import {
  type DynamicGateway,
  dynamicGateway,
  resourceFileText,
} from '../envoy/bootstrap/dynamic-resources.js';
import type { Bootstrap } from '../envoy/config-types.js';

export class EnvoyFiles {
  /** Counts the directories made. */
  private made = 0;
  /** The bootstrap last validated and its directory: an Envoy started on it takes that one (once). */
  private validated: { readonly text: string; readonly directory: string } | undefined;

  constructor(private readonly stateDirectory: string) {}

  /** What the first Envoy will run, before its files are written (`prepare`). */
  initial(bootstrap: Bootstrap): DynamicGateway {
    return dynamicGateway(bootstrap, this.directoryOf(0));
  }

  /** Writes the whole bootstrap (every resource static) for `envoy --mode validate`. */
  async validation(text: string): Promise<string> {
    const directory = this.directoryOf(++this.made);
    await mkdir(directory, { recursive: true });
    const file = path.join(directory, 'validate.yaml');
    await writeFile(file, text);
    this.validated = { text, directory };
    return file;
  }

  /** No Envoy starts from the last validated bootstrap: its directory goes. */
  async discardValidation(): Promise<void> {
    if (this.validated) await rm(this.validated.directory, { recursive: true, force: true });
    this.validated = undefined;
  }

  /** The bootstrap and resource files a new Envoy starts on, in a directory of its own. */
  async prepare(
    bootstrap: Bootstrap,
  ): Promise<{ readonly bootstrapFile: string; readonly published: DynamicGateway }> {
    const validated = this.validated?.text === renderBootstrap(bootstrap) ? this.validated : undefined;
    if (validated) this.validated = undefined;
    const directory = validated?.directory ?? this.directoryOf(++this.made);
    const published = dynamicGateway(bootstrap, directory);
    for (const file of published.resources) {
      await mkdir(path.dirname(file.file), { recursive: true });
      await writeFile(file.file, resourceFileText(file));
    }
    const bootstrapFile = path.join(directory, 'bootstrap.yaml');
    await writeFile(bootstrapFile, renderBootstrap(published.bootstrap));
    return { bootstrapFile, published };
  }

  private directoryOf(index: number): string {
    return path.join(this.stateDirectory, `envoy-${index}`);
  }
}

/** The directory of a running Envoy's resource files. */
export function directoryOf(published: DynamicGateway): string {
  const listeners = published.bootstrap.dynamic_resources.lds_config.path_config_source.path;
  return path.dirname(path.dirname(listeners));
}

/**
 * Whether the Envoy running `published` can take `bootstrap` through its resource files: what stays in its
 * bootstrap is the same, and none of its listeners is on a port the system chose (its files say 0 there; the new
 * ones would name the port it got, a different listener that could not bind beside the old one).
 */
export function changesInPlace(published: DynamicGateway, bootstrap: Bootstrap): boolean {
  const next = dynamicGateway(bootstrap, directoryOf(published));
  if (renderBootstrap(next.bootstrap) !== renderBootstrap(published.bootstrap)) return false;
  const listeners = published.resources.find((file) => file.kind === 'listeners')?.document.resources ?? [];
  return !listeners.some(
    (listener) =>
      (listener.address as { socket_address?: { port_value?: number } } | undefined)?.socket_address
        ?.port_value === 0,
  );
}
