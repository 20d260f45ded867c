import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const POLICY = fileURLToPath(new URL('../../../src/policy/', import.meta.url));

/** Every .ts file under src/policy, relative to it. */
function policyFiles(): string[] {
  return (readdirSync(POLICY, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(path.sep).join('/'))
    .sort();
}

/** The files under src/policy a file imports, type-only imports included (a ring of types is a ring of concerns). */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(path.join(POLICY, file), 'utf8'),
    ts.ScriptTarget.Latest,
  );
  const out: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier;
    if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.'))
      continue;
    const target = path.posix.normalize(
      path.posix.join(path.posix.dirname(file), specifier.text.replace(/\.js$/, '.ts')),
    );
    if (!target.startsWith('..')) out.push(target);
  }
  return out;
}

/** Each ring as the files on it, found by a depth-first walk (the graph has a few dozen files). */
function rings(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (state.get(next) === undefined) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('src/policy imports', () => {
  const graph = new Map(policyFiles().map((f) => [f, importsOf(f)]));

  it('form no ring', () => {
    expect(rings(graph).map((ring) => ring.join(' → '))).toEqual([]);
  });

  it('keep each element to itself: an element file imports no other element file, nor the runner', () => {
    const offending = [...graph]
      .filter(([file]) => file.startsWith('elements/') && file !== 'elements/index.ts')
      .flatMap(([file, targets]) =>
        targets
          .filter((t) => t.startsWith('elements/') || t === 'runner.ts' || t === 'document.ts')
          .map((t) => `${file} → ${t}`),
      );
    expect(offending).toEqual([]);
  });
});
