import { chmodSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Directories and files only the gateway's own user may read: the embedded store (tokens, sessions, counters), the
 * signing keys, TLS private keys. A mode given to mkdir or open is masked by the umask, and a library that creates
 * files may not take one at all (lmdb-js's backup), so modes are set with chmod, which no umask touches.
 */

/** Creates `directory` and its missing parents as 0700. An existing directory is left as it is: it may be a mount
 * point or a volume the operator prepared; the files put in it are 0600 whatever its mode. */
export function makePrivateDirectory(directory: string): void {
  const resolved = path.resolve(directory);
  const first = mkdirSync(resolved, { recursive: true, mode: 0o700 });
  if (first === undefined) return;
  for (let created = resolved; ; created = path.dirname(created)) {
    chmodSync(created, 0o700);
    if (created === first || created === path.dirname(created)) break;
  }
}

/**
 * Makes `file` 0600 when others may read it (written by an older version, or by a library that creates files
 * 0644). A file of another user is left alone: chmod would fail, and its owner chose its mode.
 */
export function makeFilePrivate(file: string): void {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (stat === undefined || (stat.mode & 0o077) === 0) return;
  if (process.getuid !== undefined && stat.uid !== process.getuid()) return;
  chmodSync(file, 0o600);
}
