/**
 * The module layout of docs/architecture.md, checked on the source: which module may import which (the rules are
 * scripts/layout.ts's, which also writes the page's table), and no import loops between files at run time (a loop
 * makes a module's value depend on which file happens to be loaded first). Files directly in src/ (the logger, the
 * bounded body reader, the diagnostic type, redaction, …) are shared by every module and import only each other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import {
  independentOfTests,
  mayImport,
  testFolders,
  testKinds,
  testSetupFile,
} from '../../scripts/layout.js';

/** Packages that would tie the policy language to a transport: it is a library tested, fuzzed and benchmarked alone. */
const transportPackages = /^(@grpc\/|koa$|@koa\/|ioredis$)/;

const repository = fileURLToPath(new URL('../..', import.meta.url));
const src = path.join(repository, 'src');
const testRoot = path.join(repository, 'test');

interface Edge {
  readonly from: string;
  readonly to: string;
  /** Only types cross it: erased at compile time, so it can neither loop nor load anything at run time. */
  readonly typeOnly: boolean;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    // Dot-folders hold tools' own files (test/e2e/python-sdk/.venv), not ours.
    if (entry.name.startsWith('.')) return [];
    const file = path.join(directory, entry.name);
    return entry.isDirectory() ? sourceFiles(file) : entry.name.endsWith('.ts') ? [file] : [];
  });
}

function importsOf(source: ts.SourceFile): { specifier: string; typeOnly: boolean }[] {
  const found: { specifier: string; typeOnly: boolean }[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            bindings !== undefined &&
            ts.isNamedImports(bindings) &&
            bindings.elements.length > 0 &&
            bindings.elements.every((element) => element.isTypeOnly)));
      found.push({ specifier: statement.moduleSpecifier.text, typeOnly });
    } else if (
      ts.isExportDeclaration(statement) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      const clause = statement.exportClause;
      const typeOnly =
        statement.isTypeOnly ||
        (clause !== undefined &&
          ts.isNamedExports(clause) &&
          clause.elements.every((element) => element.isTypeOnly));
      found.push({ specifier: statement.moduleSpecifier.text, typeOnly });
    }
  }
  return found;
}

const files = sourceFiles(src);
/** Each file read and parsed once, with parent links (the size checks measure nodes against their file). */
const parsed = new Map(
  files.map((file) => [
    file,
    ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true),
  ]),
);
const edges: Edge[] = [];
const packages: { from: string; name: string }[] = [];
for (const file of files) {
  for (const { specifier, typeOnly } of importsOf(parsed.get(file)!)) {
    if (specifier.startsWith('.')) {
      edges.push({
        from: file,
        to: path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts'),
        typeOnly,
      });
    } else packages.push({ from: file, name: specifier });
  }
}

const relative = (file: string) => path.relative(src, file);
/** The module a file belongs to (its first folder under src/), or undefined for a shared file directly in src/. */
const moduleOf = (file: string) => {
  const parts = relative(file).split(path.sep);
  return parts.length > 1 ? parts[0] : undefined;
};

describe('the module layout', () => {
  it('has a rule for every module under src/', () => {
    const modules = new Set(files.map(moduleOf).filter((name) => name !== undefined));
    expect([...modules].sort()).toEqual(Object.keys(mayImport).sort());
  });

  it('imports across modules only what the Layout table allows', () => {
    const breaches: string[] = [];
    for (const edge of edges) {
      const from = moduleOf(edge.from);
      const to = moduleOf(edge.to);
      if (from === undefined) {
        // Shared files import only shared files.
        if (to !== undefined) breaches.push(`${relative(edge.from)} (shared) imports ${relative(edge.to)}`);
        continue;
      }
      if (to === undefined || from === to) continue;
      const allowed = mayImport[from] ?? [];
      const target = relative(edge.to);
      const ok = allowed.some((rule) => rule === '*' || rule === to || rule === target);
      if (!ok) breaches.push(`${relative(edge.from)} imports ${target}`);
    }
    expect(breaches).toEqual([]);
  });

  it('keeps expr/ and policy/ free of transports', () => {
    const breaches = packages
      .filter(
        ({ from, name }) => ['expr', 'policy'].includes(moduleOf(from) ?? '') && transportPackages.test(name),
      )
      .map(({ from, name }) => `${relative(from)} imports ${name}`);
    expect(breaches).toEqual([]);
  });

  it('has no import loop between files at run time', () => {
    const runtime = new Map<string, string[]>();
    for (const edge of edges) {
      if (edge.typeOnly) continue;
      runtime.set(edge.from, [...(runtime.get(edge.from) ?? []), edge.to]);
    }
    expect(stronglyConnected(files, runtime).map((loop) => loop.map(relative).sort())).toEqual([]);
  });
});

/** Tarjan's strongly connected components with more than one file: each is an import loop. */
function stronglyConnected(
  nodes: readonly string[],
  next: ReadonlyMap<string, readonly string[]>,
): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  let counter = 0;
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) loops.push(component);
    }
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return loops;
}

/** Past this a function does several things that want names of their own (STYLE.md). */
const longestFunctionLines = 150;
/** Each step of the authorization flow is one file a reader takes in at once. */
const longestAuthorizeFileLines = 200;
/** The exchange is where every change to the gateway's semantics lands: each of its jobs one file read at once. */
const longestExchangeFileLines = 300;

describe('the size of units', () => {
  it(`has no function over ${longestFunctionLines} lines`, () => {
    const long: string[] = [];
    for (const file of files) {
      const source = parsed.get(file)!;
      const visit = (node: ts.Node) => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
          const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
          if (last - first + 1 > longestFunctionLines)
            long.push(`${relative(file)}:${first + 1}: ${last - first + 1} lines`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(long).toEqual([]);
  });

  it(`keeps each file of the authorization flow under ${longestAuthorizeFileLines} lines`, () => {
    const long = files
      .filter((file) => relative(file).startsWith(`auth${path.sep}authorize${path.sep}`))
      .map((file) => ({ file, lines: parsed.get(file)!.getLineStarts().length }))
      .filter(({ lines }) => lines > longestAuthorizeFileLines)
      .map(({ file, lines }) => `${relative(file)}: ${lines} lines`);
    expect(long).toEqual([]);
  });

  it(`keeps each file of the exchange (engine/exchange/) under ${longestExchangeFileLines} lines`, () => {
    const exchange = files.filter((file) =>
      relative(file).startsWith(`engine${path.sep}exchange${path.sep}`),
    );
    expect(exchange.length).toBeGreaterThan(0);
    const long = exchange
      .map((file) => ({ file, lines: parsed.get(file)!.getLineStarts().length }))
      .filter(({ lines }) => lines > longestExchangeFileLines)
      .map(({ file, lines }) => `${relative(file)}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});

/** Every relative module a file names: static imports and re-exports, and `import('…')` with a literal. */
function relativeModulesOf(file: string): string[] {
  const source =
    parsed.get(file) ?? ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found = importsOf(source).map(({ specifier }) => specifier);
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      found.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => path.resolve(path.dirname(file), specifier));
}

const inside = (folder: string, file: string) => !path.relative(folder, file).startsWith('..');

describe('the test layout (STYLE.md, "Test code")', () => {
  it(`keeps ${independentOfTests.map((folder) => `${folder}/`).join(' and ')} free of imports from test/`, () => {
    const breaches = independentOfTests
      .flatMap((folder) => sourceFiles(path.join(repository, folder)))
      .flatMap((file) =>
        relativeModulesOf(file)
          .filter((target) => inside(testRoot, target))
          .map((target) => `${path.relative(repository, file)} imports ${path.relative(repository, target)}`),
      );
    expect(breaches).toEqual([]);
  });

  it('names every folder under test/ in scripts/layout.ts', () => {
    const folders = readdirSync(testRoot, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(
      folders.filter((folder) => !(folder in testFolders)),
      'folders under test/ that testFolders in scripts/layout.ts does not name (STYLE.md, "Test code")',
    ).toEqual([]);
  });

  it(`gives a test folder one setup file, ${testSetupFile}, imported only beside it and below it`, () => {
    const breaches: string[] = [];
    for (const kind of testKinds) {
      for (const file of sourceFiles(path.join(testRoot, kind))) {
        const name = path.basename(file);
        if (!name.endsWith('.test.ts') && name !== testSetupFile)
          breaches.push(
            `${path.relative(repository, file)}: a test folder's setup is named ${testSetupFile}`,
          );
        for (const target of relativeModulesOf(file).map((module) => module.replace(/\.js$/, '.ts'))) {
          const local = testKinds.some((other) => inside(path.join(testRoot, other), target));
          if (local && !inside(path.dirname(target), file))
            breaches.push(
              `${path.relative(repository, file)} imports ${path.relative(repository, target)}, another test folder's`,
            );
        }
      }
    }
    expect(breaches).toEqual([]);
  });
});
