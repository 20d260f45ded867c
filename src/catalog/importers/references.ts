/**
 * What an OpenAPI definition may reach through `$ref`. Every file it refers to is read through the source map
 * first, so an alias bomb in any of them is refused before @readme/openapi-parser (whose YAML reader expands
 * aliases as shared objects, then walks them without a bound) gets to it. A definition from someone else (`root`:
 * an APIOps artifact folder) may refer only to files inside that folder: URLs and files outside are refused with
 * the `$ref` that names them, and the parser's resolvers are confined the same way, so a reference this walk does
 * not see (one resolved against an `$id`) cannot read them either.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ResolverError } from '@readme/openapi-parser';
import type { Diagnostic } from '../../diagnostic.js';
import { isInsideFolder } from '../../inside-folder.js';
import { ImportError, ImportRefusedError } from './model.js';
import type { SourceMap } from './source-map.js';

/**
 * Follows the `$ref`s of `file` through every file they reach. Throws ImportRefusedError for an alias bomb in any
 * of them and, with `root`, for each `$ref` to a URL or to a file outside `root`. A file that cannot be read is
 * left to the parser, which says so at the `$ref` that names it.
 */
export async function checkReferences(file: string, sources: SourceMap, root?: string): Promise<void> {
  const problems: Diagnostic[] = [];
  const seen = new Set<string>();
  const pending = [{ absolute: path.resolve(file), shown: file }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (seen.has(next.absolute)) continue;
    seen.add(next.absolute);
    let references: Awaited<ReturnType<SourceMap['references']>>;
    try {
      references = await sources.references(next.absolute, next.shown);
    } catch (error) {
      if (error instanceof ImportRefusedError || !(error instanceof ImportError)) throw error;
      continue;
    }
    for (const reference of references) {
      const { value, target } = reference;
      const at = { file: reference.file, line: reference.line, column: reference.column };
      if (target === undefined) {
        if (root !== undefined && !value.startsWith('#')) {
          problems.push({ ...at, message: `$ref "${value}" is a URL: ${onlyInside}` });
        }
        continue;
      }
      if (root !== undefined && !isInsideFolder(root, target.absolute)) {
        problems.push({
          ...at,
          message: `$ref "${value}" leads to ${target.absolute}, outside the artifact folder ${root}: ${onlyInside}`,
        });
        continue;
      }
      pending.push(target);
    }
  }
  if (problems.length > 0) throw new ImportRefusedError(problems);
}

const onlyInside = 'a specification from an artifact folder may refer only to files inside the folder';

/** A read the confined resolvers refused; `problems` say where and why. */
export class RefusedReference extends ResolverError {
  constructor(
    readonly problems: readonly Diagnostic[],
    source: string,
  ) {
    super(new Error(problems.map((problem) => problem.message).join('; ')), source);
  }
}

/**
 * The parser's options for a definition confined to `root`: its file resolver reads only files inside `root`, and
 * through the source map (so within the alias bound); its HTTP resolver reads nothing.
 */
export function confinedResolvers(root: string, sources: SourceMap) {
  return {
    resolve: {
      file: {
        async read(target: { url: string }) {
          const file = fileSystemPath(target.url);
          if (!isInsideFolder(root, file)) {
            throw new RefusedReference(
              [{ file, message: `outside the artifact folder ${root}: ${onlyInside}` }],
              file,
            );
          }
          try {
            await sources.load(file);
          } catch (error) {
            if (error instanceof ImportRefusedError) throw new RefusedReference(error.problems, file);
          }
          return readFile(file).catch((error: Error) => {
            // Worded as the parser's own file resolver words it, so the problem is placed at the `$ref`.
            error.message = `Error opening file ${file}: ${error.message}`;
            throw new ResolverError(error, file);
          });
        },
      },
      http: {
        read(target: { url: string }): never {
          throw new RefusedReference([{ file: target.url, message: `a URL: ${onlyInside}` }], target.url);
        },
      },
    },
  };
}

/** The parser names local files by path or by `file:` URL, percent-encoded. */
function fileSystemPath(url: string): string {
  if (url.startsWith('file:')) return fileURLToPath(url);
  try {
    return path.resolve(decodeURI(url));
  } catch {
    return path.resolve(url);
  }
}
