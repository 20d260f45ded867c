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

/**
 * The error for a data directory this process may not write (EACCES, EPERM): the directory, its owner and mode, and
 * this process's user — what it takes to fix a volume that came up root-owned in a container running as another
 * user. Any other error is returned as it is.
 */
export function unwritableDirectory(setting: string, directory: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== 'EACCES' && code !== 'EPERM') return error;
  const found = (() => {
    // A directory not made yet: the nearest one that exists is the one that refused.
    let existing = path.resolve(directory);
    try {
      for (;;) {
        const stat = statSync(existing, { throwIfNoEntry: false });
        if (stat !== undefined || existing === path.dirname(existing)) {
          const what = existing === path.resolve(directory) ? 'it' : `it does not exist, and ${existing}`;
          const mode = ((stat?.mode ?? 0) & 0o777).toString(8).padStart(4, '0');
          return `${what} belongs to uid ${stat?.uid} (mode ${mode})`;
        }
        existing = path.dirname(existing);
      }
    } catch (cause) {
      return `${existing} cannot be looked at either (${(cause as NodeJS.ErrnoException).code})`;
    }
  })();
  const user = process.getuid?.();
  return new Error(
    `${setting} ${directory} is not writable by this process (${code}): ${found}` +
      `${user === undefined ? '' : `, and the process runs as uid ${user}`}; make the directory writable by that ` +
      'user (in a container image: create it and chown it to the user before USER, so a new volume copies that owner)',
  );
}
