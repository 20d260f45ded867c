import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/** A temporary folder for the files a test file writes (gateway files, policies, test files), removed after it. */
export function scratchFolder(prefix: string): { folder: string; write(name: string, text: string): string } {
  const folder = mkdtempSync(path.join(tmpdir(), `portcullis-${prefix}-`));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  return {
    folder,
    /** Writes `text` to `name` in the folder; returns the file's path. */
    write(name, text) {
      const file = path.join(folder, name);
      writeFileSync(file, text);
      return file;
    },
  };
}
