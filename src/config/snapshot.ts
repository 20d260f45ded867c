import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { referencedFiles } from './reload.js';

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

async function replaceFile(file: string, text: string): Promise<void> {
  const temporary = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    await writeFile(temporary, text, { flag: 'wx' });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
