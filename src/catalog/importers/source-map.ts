/**
 * Positions in JSON/YAML definition files, so a problem found in the dereferenced document (where `$ref`s are
 * already replaced) can still be shown at `file:line:col` of the text the user wrote. A JSON pointer is walked
 * through the source files, following `$ref`s into the file and node they name.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
  type Scalar,
} from 'yaml';
import { YamlAliasError, yamlData } from '../../yaml-data.js';
import { ImportError, ImportRefusedError } from './model.js';

interface SourceFile {
  /** Absolute path, the cache key and the base of relative `$ref`s. */
  readonly file: string;
  /** The path as the user would write it: the root as given, others relative to the root's folder. */
  readonly shown: string;
  readonly root: Node | null;
  /** The document as data, aliases expanded within the bound every YAML reader keeps. */
  readonly data: unknown;
  readonly lines: LineCounter;
}

/** A `$ref` as written: its value, and where (the file as shown, line and column of the value). */
export interface WrittenRef {
  readonly value: string;
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

export interface SourcePosition {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** How much of the pointer was found: the part after it does not exist in the source. */
  readonly complete: boolean;
  /** The pointer as found, properly escaped (validators sometimes write `application/json` unescaped). */
  readonly pointer: string;
}

/** Splits a JSON pointer (`/paths/~1pets/get`) into its unescaped tokens. */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '' || pointer === '#') return [];
  return pointer
    .replace(/^#/, '')
    .slice(1)
    .split('/')
    .map((token) => decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~'));
}

export function toPointer(tokens: readonly (string | number)[]): string {
  return tokens.map((token) => `/${String(token).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

export class SourceMap {
  private readonly files = new Map<string, SourceFile>();

  /**
   * Reads and parses `file` (JSON is YAML); a syntax error is an ImportError at its line and column, an alias bomb
   * an ImportRefusedError.
   */
  async load(file: string): Promise<unknown> {
    const source = await this.source(path.resolve(file), file);
    return source.data ?? null;
  }

  /**
   * The `$ref`s written in `absolute` (read as `load` reads it; `shown` names it in problems), with where each is
   * and the file it names, resolved against the file's folder (undefined for a URL or a reference inside the file).
   */
  async references(
    absolute: string,
    shown: string,
  ): Promise<(WrittenRef & { target?: { absolute: string; shown: string } })[]> {
    const source = await this.source(absolute, shown);
    return scalarPairs(source.root, '$ref').map((node) => {
      const value = String(node.value);
      const written = { ...position(source, node, true), value };
      const target = value.split('#')[0]!;
      if (target === '' || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(target)) return written;
      // The parser reads a reference as a URL: `%2e%2e/` is `../` to it, so it is to this check.
      let decoded = target;
      try {
        decoded = decodeURIComponent(target);
      } catch {}
      return {
        ...written,
        target: {
          absolute: path.resolve(path.dirname(source.file), decoded),
          shown: path.join(path.dirname(source.shown), decoded),
        },
      };
    });
  }

  /** Where `pointer` (into the document rooted at `file`) was written; undefined when even the root is unknown. */
  async locate(file: string, pointer: string): Promise<SourcePosition | undefined> {
    const root = await this.source(path.resolve(file), file).catch(() => undefined);
    if (!root) return undefined;
    let source: SourceFile = root;
    let node: Node | null = source.root;
    let keyNode: Node | undefined;
    const tokens = pointerTokens(pointer);
    const matched: string[] = [];
    const done = (at: Node | null | undefined, complete: boolean, from: number): SourcePosition => ({
      ...position(source, at, complete),
      pointer: toPointer([...matched, ...tokens.slice(from)]),
    });
    // Bounds the walk when $refs point at each other.
    let hops = 0;
    let index = 0;
    while (hops < 64) {
      const ref = refOf(node);
      if (ref !== undefined) {
        const [target, fragment = ''] = ref.split('#', 2) as [string, string?];
        const next: SourceFile | undefined =
          target === ''
            ? source
            : await this.source(
                path.resolve(path.dirname(source.file), target),
                path.join(path.dirname(source.shown), target),
              ).catch(() => undefined);
        if (!next) break;
        const resolved = walk(next.root, pointerTokens(fragment));
        if (!resolved.complete) break;
        source = next;
        node = resolved.node;
        keyNode = resolved.keyNode;
        hops++;
        continue;
      }
      if (index === tokens.length) return done(keyNode ?? node, true, index);
      // A token may stand for several when a key holds "/" and was not escaped (media types).
      let step: ReturnType<typeof child>;
      let used = 1;
      for (; used <= Math.min(3, tokens.length - index); used++) {
        step = child(node, tokens.slice(index, index + used).join('/'));
        if (step) break;
      }
      if (!step) return done(keyNode ?? node, false, index);
      matched.push(tokens.slice(index, index + used).join('/'));
      index += used;
      node = step.node;
      keyNode = step.keyNode;
    }
    return done(keyNode ?? node, false, index);
  }

  /**
   * The first `$ref` in the loaded files whose value passes `test` (given the value and the absolute path of the
   * file it is written in): for errors that name a target but not the reference.
   */
  findRef(test: (value: string, file: string) => boolean): SourcePosition | undefined {
    for (const source of this.files.values()) {
      const found = findScalarPair(source.root, '$ref', (value) => test(value, source.file));
      if (found) return { ...position(source, found, true), pointer: '' };
    }
    return undefined;
  }

  private async source(absolute: string, shown: string): Promise<SourceFile> {
    const known = this.files.get(absolute);
    if (known) return known;
    const text = await readFile(absolute, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new ImportError([
        { file: shown, message: `cannot read the file (${error.code ?? error.message})` },
      ]);
    });
    const lines = new LineCounter();
    const document = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
    if (document.errors.length > 0) {
      throw new ImportError(
        document.errors.map((error) => {
          const at = lines.linePos(error.pos[0]);
          return { file: shown, line: at.line, column: at.col, message: error.message.split('\n')[0]! };
        }),
      );
    }
    let data: unknown;
    try {
      data = yamlData(document);
    } catch (error) {
      if (!(error instanceof YamlAliasError)) throw error;
      throw new ImportRefusedError([{ file: shown, line: 1, column: 1, message: error.message }]);
    }
    const source = { file: absolute, shown, root: document.contents, data, lines };
    this.files.set(absolute, source);
    return source;
  }
}

function refOf(node: Node | null): string | undefined {
  if (!isMap(node)) return undefined;
  const value = node.get('$ref');
  return typeof value === 'string' ? value : undefined;
}

function child(node: Node | null, token: string): { node: Node | null; keyNode?: Node } | undefined {
  if (isMap(node)) {
    for (const pair of node.items) {
      if (isScalar(pair.key) && String(pair.key.value) === token) {
        return { node: isNode(pair.value) ? pair.value : null, keyNode: pair.key };
      }
    }
    return undefined;
  }
  if (isSeq(node)) {
    if (/^\d+$/.test(token)) {
      const item = node.items[Number(token)];
      return isNode(item) ? { node: item } : undefined;
    }
    // Some validators name array entries by their `name` (parameters): accept that as well.
    const named = node.items.find((item) => isMap(item) && item.get('name') === token);
    return isNode(named) ? { node: named } : undefined;
  }
  return undefined;
}

function walk(
  root: Node | null,
  tokens: readonly string[],
): { node: Node | null; keyNode?: Node; complete: boolean } {
  let node = root;
  let keyNode: Node | undefined;
  for (const token of tokens) {
    const step = child(node, token);
    if (!step) return { node, ...(keyNode ? { keyNode } : {}), complete: false };
    node = step.node;
    keyNode = step.keyNode;
  }
  return { node, ...(keyNode ? { keyNode } : {}), complete: true };
}

function findScalarPair(node: unknown, key: string, test: (text: string) => boolean): Node | undefined {
  if (isMap(node)) {
    for (const pair of node.items) {
      if (
        isPair(pair) &&
        isScalar(pair.key) &&
        pair.key.value === key &&
        isScalar(pair.value) &&
        typeof pair.value.value === 'string' &&
        test(pair.value.value)
      ) {
        return pair.value;
      }
      const found = findScalarPair(pair.value, key, test);
      if (found) return found;
    }
  } else if (isSeq(node)) {
    for (const item of node.items) {
      const found = findScalarPair(item, key, test);
      if (found) return found;
    }
  }
  return undefined;
}

/** Every scalar value of `key` in the tree, in document order. */
function scalarPairs(node: unknown, key: string): Scalar[] {
  if (isMap(node)) {
    return node.items.flatMap((pair) => [
      ...(isPair(pair) && isScalar(pair.key) && pair.key.value === key && isScalar(pair.value)
        ? [pair.value]
        : []),
      ...scalarPairs(pair.value, key),
    ]);
  }
  if (isSeq(node)) return node.items.flatMap((item) => scalarPairs(item, key));
  return [];
}

function position(
  source: SourceFile,
  node: Node | null | undefined,
  complete: boolean,
): Omit<SourcePosition, 'pointer'> {
  const offset = node?.range?.[0] ?? 0;
  const at = source.lines.linePos(offset);
  return { file: source.shown, line: at.line, column: at.col, complete };
}
