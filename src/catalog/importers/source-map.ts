/**
 * Positions in JSON/YAML definition files, so a problem found in the dereferenced document (where `$ref`s are
 * already replaced) can still be shown at `file:line:col` of the text the user wrote. A JSON pointer is walked
 * through the source files, following `$ref`s into the file and node they name.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isMap, isNode, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { ImportError } from './model.js';

interface SourceFile {
  /** Absolute path, the cache key and the base of relative `$ref`s. */
  readonly file: string;
  /** The path as the user would write it: the root as given, others relative to the root's folder. */
  readonly shown: string;
  readonly root: Node | null;
  readonly lines: LineCounter;
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

  /** Reads and parses `file` (JSON is YAML); a syntax error is an ImportError at its line and column. */
  async load(file: string): Promise<unknown> {
    const source = await this.source(path.resolve(file), file);
    return source.root?.toJSON() ?? null;
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
    const source = { file: absolute, shown, root: document.contents, lines };
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

function position(
  source: SourceFile,
  node: Node | null | undefined,
  complete: boolean,
): Omit<SourcePosition, 'pointer'> {
  const offset = node?.range?.[0] ?? 0;
  const at = source.lines.linePos(offset);
  return { file: source.shown, line: at.line, column: at.col, complete };
}
