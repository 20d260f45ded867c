/**
 * Loading and compiling the whole public policy corpus (issue 3 target: < 1 s), next to a baseline measured in
 * the same run: saxes parsing the same texts with no masking, checking or compiling. Plain script:
 * `node --import tsx bench/policy-load.ts`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SaxesParser } from 'saxes';
import { parse as parseYaml } from 'yaml';
import type { NamedValue } from '../src/policy/source.js';
import { validatePolicies } from '../src/policy/validate.js';

const ROOT = process.env.PORTCULLIS_CORPUS ?? '/work/shared/corpus/apim-snippets';
const ROUNDS = Number(process.env.ROUNDS ?? 10);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith('.xml') ? [path] : [];
  });
}

const inputs = files(ROOT).map((file) => ({ file: relative(ROOT, file), text: readFileSync(file, 'utf8') }));
const nvData = parseYaml(
  readFileSync(new URL('../test/unit/policy/fixtures/corpus-named-values.yaml', import.meta.url), 'utf8'),
) as Record<string, string | { value: string; secret?: boolean }>;
const namedValues = new Map<string, NamedValue>(
  Object.entries(nvData).map(([k, v]) => [
    k,
    typeof v === 'string' ? { value: v } : { value: v.value, secret: v.secret === true },
  ]),
);

function baseline(): void {
  for (const { text } of inputs) {
    const parser = new SaxesParser();
    // Many documents are not well-formed; the baseline just reads as far as saxes goes.
    parser.on('error', () => {});
    try {
      parser.write(text).close();
    } catch {
      // ignored: the baseline measures raw parsing cost only
    }
  }
}

function load(): number {
  return validatePolicies(inputs, { namedValues, scope: 'product' }).length;
}

function time(fn: () => unknown): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

// Warm up both paths (JIT, lazy module state) before measuring.
baseline();
const diagnostics = load();
const base: number[] = [];
const full: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  base.push(time(baseline));
  full.push(time(load));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const b = median(base);
const f = median(full);
const bytes = inputs.reduce((n, i) => n + i.text.length, 0);
console.log(
  `corpus: ${inputs.length} documents, ${(bytes / 1024).toFixed(0)} KiB, ${diagnostics} diagnostics (unimplemented elements, expression gaps, damaged documents)`,
);
console.log(`baseline  saxes parse only          ${b.toFixed(1)} ms`);
console.log(`portcullis load+check+compile       ${f.toFixed(1)} ms   (target < 1000 ms)`);
console.log(`ratio (compile / baseline)          ${(f / b).toFixed(1)}x`);
process.exitCode = f < 1000 ? 0 : 1;
