/**
 * `npm run bench`: runs each benchmark script in its own process, one after another, so they do not disturb each
 * other. A benchmark prints its figures next to a baseline it measured in the same run. `npm run bench -- NAME…`
 * runs only those.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = fileURLToPath(new URL('.', import.meta.url));

/** In the order they run; each is `bench/<name>.ts`. */
const benchmarks = [
  'startup',
  'passthrough',
  'transport',
  'expr-eval',
  'policy-load',
  'pipeline',
  'llm-stream',
  'backend-pool',
  'state',
  'oauth-grants',
  'mcp',
  'mcp-upstream',
];

const wanted = process.argv.slice(2);
let failed = false;
for (const name of benchmarks) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  const file = path.join(benchDir, `${name}.ts`);
  if (!existsSync(file)) continue;
  console.log(`\n== ${name}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', file], { stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`bench ${name} failed (${result.status ?? result.signal})`);
    failed = true;
  }
}
process.exitCode = failed ? 1 : 0;
