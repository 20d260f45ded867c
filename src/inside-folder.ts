import path from 'node:path';

/**
 * Whether `file` is inside `folder` (both absolute): below it, not the folder itself, not reached through `..`.
 * Lexical: links are not followed (an artifact folder refuses them before anything in it is read).
 */
export function isInsideFolder(folder: string, file: string): boolean {
  const relative = path.relative(folder, file);
  return (
    relative !== '' &&
    relative !== '..' &&
    !relative.startsWith(`..${path.sep}`) &&
    !path.isAbsolute(relative)
  );
}
