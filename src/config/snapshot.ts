import { createHash, randomBytes } from 'node:crypto';
import { access, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DefinitionSchema } from './definitions.js';
import { fileText, type LoadedConfig, readNamedFile } from './load.js';
import { type RuntimePlan, withTlsFiles } from './plan.js';
import type { GatewayConfig } from './schema.js';
import { referencedFiles } from './watch.js';

/** The texts of a configuration file and of every file it references, by absolute path. */
export type FileTexts = ReadonlyMap<string, string>;

/**
 * Reads the configuration file and every file it names that exists (policy documents, definitions and their
 * `$ref`s): what a running gateway compares with the disk to tell whether anything changed, and what a change is
 * validated against. The configuration is read once, so its references are those of the text returned.
 */
export async function readConfigFiles(configFile: string): Promise<Map<string, string>> {
  const file = path.resolve(configFile);
  const text = await readFile(file, 'utf8');
  const texts = new Map([[file, text]]);
  for (const referenced of await referencedFiles(file, text)) {
    if (texts.has(referenced)) continue;
    const content = await readFile(referenced, 'utf8').catch(() => undefined);
    if (content !== undefined) texts.set(referenced, content);
  }
  return texts;
}

/** The files whose text differs between two snapshots (present in one only included). */
export function changedFiles(a: FileTexts, b: FileTexts): string[] {
  const names = new Set([...a.keys(), ...b.keys()]);
  return [...names].filter((name) => a.get(name) !== b.get(name)).sort();
}

/**
 * Writes each file by renaming a complete temporary file over it, so a reader (a watcher, an engine reloading)
 * sees the old text or the new one, never half of it. Returns what was there before (undefined: no file), for
 * `restoreFiles`.
 */
export async function replaceFiles(files: FileTexts): Promise<Map<string, string | undefined>> {
  const previous = new Map<string, string | undefined>();
  for (const [file, text] of files) {
    previous.set(file, await readFile(file, 'utf8').catch(() => undefined));
    await replaceFile(file, text);
  }
  return previous;
}

/** Puts back what `replaceFiles` returned: the old texts, and no file where there was none. */
export async function restoreFiles(previous: ReadonlyMap<string, string | undefined>): Promise<void> {
  for (const [file, text] of previous) {
    if (text === undefined) await rm(file, { force: true });
    else await replaceFile(file, text);
  }
}

async function replaceFile(file: string, text: string | Uint8Array, mode?: number): Promise<void> {
  const temporary = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    await writeFile(temporary, text, { flag: 'wx', ...(mode === undefined ? {} : { mode }) });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * The running configuration as `up` hands it to its engines and its service: the configuration as validated
 * (definitions imported) and the bytes of every file it names — policy documents, fragments, definitions and their
 * `$ref`s, certificates, keys, CA bundles, signing keys. A child started (or reloaded) from it runs what `up`
 * validated, whatever the files on disk say by then: an edit `up` refused stays refused when a child is restarted.
 * Paths stay the configuration's own, so relative paths, error messages and state directories are as before.
 */
interface RunningSnapshot {
  readonly file: string;
  readonly directory: string;
  readonly config: GatewayConfig;
  /** The WSDL definitions' XML schemas by API id, as imported with the configuration (LoadedConfig). */
  readonly definitionSchemas: Record<string, DefinitionSchema>;
  /** Base64 of each file's bytes, by absolute path. */
  readonly files: Record<string, string>;
}

/** A snapshot as `writeRunningSnapshot` writes it, and the files it holds. */
export interface Snapshot {
  readonly text: string;
  readonly files: ReadonlyMap<string, Buffer>;
}

/**
 * The snapshot of `loaded` (a configuration `up` validated). Files come from `loaded.files` (the texts that were
 * validated) and, for those it does not hold, from the disk now; a file that cannot be read is left out (a child
 * then reads the disk, as without a snapshot).
 */
export async function runningSnapshot(loaded: LoadedConfig): Promise<Snapshot> {
  const text = fileText(loaded.files, loaded.file) ?? (await readFile(loaded.file, 'utf8'));
  const names = new Set([
    ...(await referencedFiles(loaded.file, text)),
    ...namedFiles(loaded.config, loaded.directory),
  ]);
  const files = new Map<string, Buffer>();
  for (const name of [...names].sort()) {
    const bytes = await readNamedFile(name, loaded.files).catch(() => undefined);
    if (bytes) files.set(name, bytes);
  }
  const snapshot: RunningSnapshot = {
    file: loaded.file,
    directory: loaded.directory,
    config: loaded.config,
    definitionSchemas: Object.fromEntries(loaded.definitionSchemas),
    files: Object.fromEntries([...files].map(([name, bytes]) => [name, bytes.toString('base64')])),
  };
  return { text: JSON.stringify(snapshot), files };
}

/**
 * The plan with Envoy's TLS files (certificates, keys, CA bundles) replaced by copies of the snapshot's, written in
 * `directory` (up's own) under names made of their content: an Envoy restarted after a crash reads the certificates
 * that run, whatever the files on disk hold by then, and a changed certificate makes a changed bootstrap, which Envoy
 * is hot-restarted onto (and validated with) like any other change. A file the snapshot lacks (the development
 * certificate, which up makes itself) is left as it is.
 */
export async function withRunningTlsFiles(
  plan: RuntimePlan,
  snapshot: Snapshot,
  directory: string,
): Promise<RuntimePlan> {
  const copies = new Map<string, string>();
  const wanted: string[] = [];
  withTlsFiles(plan, (file) => {
    wanted.push(file);
    return file;
  });
  for (const file of wanted) {
    const bytes = snapshot.files.get(file);
    if (!bytes || copies.has(file)) continue;
    const digest = createHash('sha256').update(bytes).digest('hex').slice(0, 24);
    const copy = path.join(directory, `${digest}-${path.basename(file)}`);
    // The same name is the same content: written once, never changed while an Envoy may read it.
    if (
      !(await access(copy).then(
        () => true,
        () => false,
      ))
    )
      await replaceFile(copy, bytes, 0o600);
    copies.set(file, copy);
  }
  return withTlsFiles(plan, (file) => copies.get(file) ?? file);
}

/** Writes a snapshot whole (a child starting meanwhile reads the previous one or this one), readable by us only. */
export function writeRunningSnapshot(file: string, snapshot: string): Promise<void> {
  // It holds private keys (TLS, token signing) when the configuration names them.
  return replaceFile(file, snapshot, 0o600);
}

/** The configuration a snapshot holds, its files winning over the disk (`LoadedConfig.files`). */
export async function loadRunningSnapshot(file: string): Promise<LoadedConfig> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new Error(
      `cannot read the running configuration's snapshot ${file} (${error.code ?? error.message})`,
    );
  });
  const snapshot = JSON.parse(text) as Partial<RunningSnapshot> | null;
  if (
    typeof snapshot?.file !== 'string' ||
    typeof snapshot.directory !== 'string' ||
    typeof snapshot.config !== 'object' ||
    snapshot.config === null ||
    typeof snapshot.definitionSchemas !== 'object' ||
    snapshot.definitionSchemas === null ||
    typeof snapshot.files !== 'object' ||
    snapshot.files === null
  ) {
    throw new Error(`${file}: not a snapshot of a running configuration (written by portcullis up)`);
  }
  return {
    file: snapshot.file,
    directory: snapshot.directory,
    config: snapshot.config,
    definitionSchemas: new Map(Object.entries(snapshot.definitionSchemas)),
    files: new Map(
      Object.entries(snapshot.files).map(([name, bytes]) => [name, Buffer.from(bytes, 'base64')]),
    ),
  };
}

/** The files a configuration names besides its policy documents and definitions: TLS material, signing keys. */
function namedFiles(config: GatewayConfig, directory: string): string[] {
  const tls = config.tls;
  const named = [
    tls?.certificate,
    tls?.key,
    tls?.clientCertificates?.trustedCa,
    ...Object.values(tls?.certificates ?? {}).flatMap((entry) => [entry.certificate, entry.key]),
    ...Object.values(tls?.backends ?? {}).map((backend) => backend.trustedCa),
    config.auth?.signingKeys?.file,
  ];
  return named
    .filter((file): file is string => file !== undefined)
    .map((file) => path.resolve(directory, file));
}
