/**
 * What Portcullis runs on (issue #31): a supported Node, stated once, and compiled JavaScript — no TypeScript loader
 * reaches the runtime. The compiled tree is scanned, not the sources: it is what bin/portcullis.js runs.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { build, buildIfStale, isBuildFresh } from '../../scripts/build.js';
import {
  isSupportedNode,
  nodeFlags,
  oldestSupportedMajor,
  pinnedNodeBinary,
  pinnedNodeVersion,
} from '../../scripts/node-runtime.js';
import { nodeFlags as upChildFlags } from '../../src/cli/node-flags.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const packageJson = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  version: string;
  engines: { node: string };
  dependencies: Record<string, string>;
};

/** Every module specifier a JavaScript file names: static imports, re-exports, dynamic imports and requires. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(
    /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s+)(['"`])([^'"`]+)\1/gm,
  ))
    found.push(match[2]!);
  return found;
}

describe('the runtime', () => {
  beforeAll(async () => {
    await buildIfStale(root);
  });

  it('is one supported Node line, the same in engines and in the pinned binary', () => {
    expect(packageJson.engines.node).toBe(`>=${oldestSupportedMajor}`);
    expect(isSupportedNode(pinnedNodeVersion)).toBe(true);
    expect(isSupportedNode('20.20.2')).toBe(false);
    // The tests themselves run on it: `npm test` puts the supported Node first.
    expect(isSupportedNode(process.versions.node)).toBe(true);
  });

  it('has no TypeScript loader among its dependencies or in anything the command loads', () => {
    expect(Object.keys(packageJson.dependencies)).not.toContain('tsx');
    const files = [
      path.join(root, 'bin', 'portcullis.js'),
      path.join(root, 'scripts', 'node-runtime.js'),
      path.join(root, 'scripts', 'build.js'),
      ...readdirSync(path.join(root, 'dist'), { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile() && entry.name.endsWith('.js'))
        .map((entry) => path.join(entry.parentPath, entry.name)),
    ];
    // The bundle: the CLI's entry and the chunks its lazy imports load (scripts/build.js).
    expect(files).toContain(path.join(root, 'dist', 'cli', 'main.js'));
    expect(files.filter((file) => file.includes(`${path.sep}chunks${path.sep}`)).length).toBeGreaterThan(10);
    const loaders = files.flatMap((file) =>
      specifiers(readFileSync(file, 'utf8'))
        .filter((specifier) => /^(tsx|ts-node|@swc-node\/register|esbuild-register)(\/|$)/.test(specifier))
        .map((specifier) => `${path.relative(root, file)} imports ${specifier}`),
    );
    expect(loaders).toEqual([]);
  });

  it('reads specifiers the way the scan above needs', () => {
    expect(
      specifiers(`import a from 'x';\nexport { b } from "y";\nawait import('tsx/esm/api');\nrequire(\`z\`);`),
    ).toEqual(['x', 'y', 'tsx/esm/api', 'z']);
  });

  it("run as a program, starts the pinned Node itself when setup provided one, else the PATH's node — never both", () => {
    // A `node` first on PATH that only says it ran: the launcher's shell line must not need it when the pinned Node
    // is there (one Node start, not an old Node's plus a hand-over), and must use it when there is none.
    const folder = mkdtempSync(path.join(tmpdir(), 'portcullis-path-'));
    try {
      writeFileSync(path.join(folder, 'node'), '#!/bin/sh\necho "the PATH node ran"\n');
      chmodSync(path.join(folder, 'node'), 0o755);
      const output = execFileSync(path.join(root, 'bin', 'portcullis.js'), ['--version'], {
        env: { ...process.env, PATH: `${folder}${path.delimiter}/usr/bin${path.delimiter}/bin` },
        encoding: 'utf8',
      });
      if (existsSync(pinnedNodeBinary(root))) expect(output).toBe(`portcullis ${packageJson.version}\n`);
      else expect(output).toBe('the PATH node ran\n');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("gives every process the same V8 flags: the launcher's shell line and hand-over, and up's children", () => {
    const shellLine = readFileSync(path.join(root, 'bin', 'portcullis.js'), 'utf8').split('\n')[1]!;
    const shellFlags = [...shellLine.matchAll(/exec (?:"\$node"|node) ((?:--\S+ )*)"\$0"/g)].map((m) =>
      m[1]!.trim(),
    );
    expect(shellFlags).toEqual([nodeFlags.join(' '), nodeFlags.join(' ')]);
    expect(upChildFlags).toEqual(nodeFlags);
  });

  it('builds again when a source or the installed packages changed (the bundle holds both)', async () => {
    const project = mkdtempSync(path.join(tmpdir(), 'portcullis-build-'));
    try {
      mkdirSync(path.join(project, 'src', 'cli'), { recursive: true });
      writeFileSync(path.join(project, 'src', 'cli', 'main.ts'), 'export const cli = 1;\n');
      writeFileSync(path.join(project, 'package-lock.json'), '{}\n');
      await build(project);
      expect(isBuildFresh(project)).toBe(true);
      const later = new Date(Date.now() + 60_000);
      utimesSync(path.join(project, 'package-lock.json'), later, later);
      expect(isBuildFresh(project)).toBe(false);
      await build(project);
      expect(isBuildFresh(project)).toBe(true);
      utimesSync(
        path.join(project, 'src', 'cli', 'main.ts'),
        new Date(later.getTime() + 1000),
        new Date(later.getTime() + 1000),
      );
      expect(isBuildFresh(project)).toBe(false);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
