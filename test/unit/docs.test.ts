import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expectedArchitecturePage, sharedFiles, sharedFilesOnDisk } from '../../scripts/layout.js';

/**
 * The documentation by audience (README.md, docs/, bench/README.md, STYLE.md, one README per module): its relative
 * links lead somewhere, the README stays a front page, and the generated parts match what they are generated from.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));

/** The README is the front page: what it is, the two commands, the commands, links. The rest lives in docs/. */
const longestReadmeLines = 300;

function markdownFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(directory, entry.name);
    return entry.isDirectory() ? markdownFiles(file) : entry.name.endsWith('.md') ? [file] : [];
  });
}

const pages = [
  path.join(root, 'README.md'),
  path.join(root, 'STYLE.md'),
  path.join(root, 'bench', 'README.md'),
  ...markdownFiles(path.join(root, 'docs')),
  ...markdownFiles(path.join(root, 'src')).filter((file) => path.basename(file) === 'README.md'),
];

/** Markdown with its fenced code blocks blanked (lines kept), where `# x` is a comment and `[x](y)` is text. */
function withoutFences(text: string): string {
  return text.replace(/^ *```[^\n]*\n[\s\S]*?^ *```$/gm, (block) => block.replace(/[^\n]/g, ' '));
}

/** `[text](target)` links of a page, with their line numbers; the link text may hold code spans. */
function linksOf(text: string): { line: number; target: string }[] {
  const prose = withoutFences(text);
  return [...prose.matchAll(/\[((?:[^\]\\\n]|\\.|`[^`\n]*`)*)\]\(([^)\s]+)\)/g)].map((match) => ({
    line: prose.slice(0, match.index).split('\n').length,
    target: match[2]!,
  }));
}

/** GitHub's anchors for a page's headings: lowercase, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of withoutFences(text).matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const plain = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

describe('the documentation', () => {
  it('reads links and headings as GitHub does', () => {
    const page = [
      '# Life of a request: `ExtProcStream`',
      '## Limits (`auth.limits`)',
      '## Limits (`auth.limits`)',
      'See [the `up` command](../README.md#commands) and [a file](state.md).',
      '```sh',
      '# a comment, not a heading: [not](a-link.md)',
      '```',
    ].join('\n');
    expect(linksOf(page)).toEqual([
      { line: 4, target: '../README.md#commands' },
      { line: 4, target: 'state.md' },
    ]);
    expect([...anchorsOf(page)]).toEqual([
      'life-of-a-request-extprocstream',
      'limits-authlimits',
      'limits-authlimits-1',
    ]);
  });

  it('finds the pages it checks', () => {
    const names = pages.map((file) => path.relative(root, file));
    expect(names).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md', 'bench/README.md']));
    expect(names).toContain('src/mcp/README.md');
  });

  it('has relative links that lead to a file, and anchors that lead to a heading', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(page, 'utf8');
      for (const { line, target } of linksOf(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const [file = '', anchor] = target.split('#', 2);
        const resolved = file === '' ? page : path.resolve(path.dirname(page), decodeURI(file));
        const where = `${path.relative(root, page)}:${line}: ${target}`;
        if (!existsSync(resolved)) {
          broken.push(`${where}: no file ${path.relative(root, resolved)}`);
          continue;
        }
        if (anchor === undefined || anchor === '' || !resolved.endsWith('.md')) continue;
        if (!anchorsOf(readFileSync(resolved, 'utf8')).has(anchor))
          broken.push(`${where}: no heading for #${anchor} in ${path.relative(root, resolved)}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it.each(['engine', 'service'])(
    "names every option of `portcullis %s --help` in the README's Commands table",
    async (name) => {
      const { commands } = await import('../../src/cli/commands/index.js');
      const { usage } = await commands.find((command) => command.name === name)!.load();
      const row = readFileSync(path.join(root, 'README.md'), 'utf8')
        .split('\n')
        .find((line) => line.startsWith('| `portcullis engine '));
      expect(row, 'the Commands row of engine and service').toBeDefined();
      const cells = row!.split(' / ');
      const mine = cells.find((cell) => cell.includes(`portcullis ${name} `));
      const options = [...new Set(usage.split('   (')[0]!.match(/--[a-z-]+/g))];
      for (const option of options) expect(mine, option).toContain(option);
    },
  );

  it(`keeps the README under ${longestReadmeLines} lines (the rest belongs in docs/)`, () => {
    const lines = readFileSync(path.join(root, 'README.md'), 'utf8').split('\n').length;
    expect(lines).toBeLessThan(longestReadmeLines);
  });
});

describe('the layout table of docs/architecture.md', () => {
  it('is what scripts/layout.ts generates (regenerate: node --import tsx scripts/layout.ts --write)', () => {
    const { actual, expected } = expectedArchitecturePage();
    expect(actual).toBe(expected);
  });

  it('describes every file directly in src/ (in scripts/layout.ts, sharedFiles)', () => {
    expect(sharedFilesOnDisk()).toEqual(Object.keys(sharedFiles).sort());
  });
});
