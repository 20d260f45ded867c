import { readFile } from 'node:fs/promises';
import { isNode, LineCounter, parseDocument } from 'yaml';
import type { Diagnostic } from '../diagnostic.js';

/**
 * A Diagnostic for a key path of a loaded file, located like the loader's own errors (the key when it exists,
 * else the closest parent). For checks that need several sections at once, which the per-section schemas cannot
 * see.
 */
export async function problemAt(
  file: string,
  keys: readonly (string | number)[],
  message: string,
): Promise<Diagnostic> {
  const lineCounter = new LineCounter();
  const text = await readFile(file, 'utf8').catch(() => '');
  const document = parseDocument(text, { lineCounter });
  let line = 1;
  let column = 1;
  for (let length = keys.length; length > 0; length--) {
    const prefix = keys.slice(0, length);
    const parent = length === 1 ? document.contents : document.getIn(prefix.slice(0, -1), true);
    const last = prefix[length - 1];
    let node: unknown;
    if (parent && typeof parent === 'object' && 'items' in parent && Array.isArray(parent.items)) {
      node =
        typeof last === 'number'
          ? parent.items[last]
          : (parent.items as { key?: unknown }[]).find(
              (pair) => isNode(pair.key) && (pair.key as { value?: unknown }).value === last,
            )?.key;
    }
    if (isNode(node) && node.range) {
      ({ line, col: column } = lineCounter.linePos(node.range[0]));
      break;
    }
  }
  const path = keys
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? key : `.${key}`))
    .join('');
  return { file, line, column, path, message };
}
