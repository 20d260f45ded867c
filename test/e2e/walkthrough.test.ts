import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { copyExample } from '../processes/example-copy.js';
import { startUp, type UpRun } from '../processes/up.js';

/**
 * The docs' walk-through of the management API as a new user follows it (issue #34, item 2): copy the example
 * somewhere else, start the copy, run the calls as written. The copy must run where it was copied to, the calls must
 * change the copy's files (only the lines they are about), and the repository must not change at all.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'bin', 'portcullis.js');

/** The first ```sh block of `file` after `marker`, as lines. */
function shellBlock(file: string, marker: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const from = text.indexOf(marker);
  expect(from, `${file} has "${marker}"`).toBeGreaterThanOrEqual(0);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(from));
  expect(block, `a sh block after "${marker}" in ${file}`).not.toBeNull();
  return block![1]!.trimEnd().split('\n');
}

const gitStatus = () => execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' });

const marking = `<policies>
  <inbound><base /></inbound>
  <backend><base /></backend>
  <outbound>
    <base />
    <set-header name="x-mark" exists-action="override"><value>mine</value></set-header>
  </outbound>
  <on-error><base /></on-error>
</policies>
`;

describe('the management walk-through in docs/operations.md, run as written on a copy', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'portcullis-walkthrough-'));
  let run: UpRun | undefined;

  afterAll(async () => {
    if (run) expect(await run.stop()).toBe(0);
    rmSync(scratch, { recursive: true, force: true });
  }, 30_000);

  it('copies the example anywhere, starts the copy, changes only the copy’s files and leaves git status as it was', async () => {
    const statusBefore = gitStatus();
    const [copyStep, ...rest] = shellBlock('docs/operations.md', 'so try\nthese on a copy');
    expect(rest).toEqual([]);
    const copyDir = path.join(scratch, 'my-gateway');
    const [copyCommand, upCommand] = copyStep!.split(' && ');
    expect(copyCommand).toBe('cp -r examples/courses /tmp/my-gateway');
    expect(upCommand).toBe('npx portcullis up --config /tmp/my-gateway/gateway.yaml');
    execFileSync('sh', ['-c', copyCommand!.replace('/tmp/my-gateway', copyDir)], { cwd: root });

    // The README's tour first runs the example's policy tests (`npx portcullis test --coverage` in its folder).
    const tested = execFileSync(process.execPath, [cli, 'test', '--coverage'], {
      cwd: copyDir,
      encoding: 'utf8',
    });
    expect(tested).toContain('PASS courses.policy-test.yaml');

    // The example's fixed ports, moved to free ones so the test runs beside others; nothing else is touched.
    const { configFile, ports, moved } = await copyExample(copyDir, false);
    const configBefore = readFileSync(configFile, 'utf8');
    const policyFile = path.join(copyDir, 'policies', 'courses-api.xml');

    run = startUp(configFile);
    await run.waitFor('Press Ctrl-C to stop.', 90_000);

    // "Then, in another terminal, with a policy document of yours in policy.xml".
    const terminal = path.join(scratch, 'terminal');
    execFileSync('mkdir', [terminal]);
    writeFileSync(path.join(terminal, 'policy.xml'), marking);
    const calls = shellBlock('docs/operations.md', 'Then, in another terminal');
    expect(calls[0]).toMatch(/^M=http:\/\/127\.0\.0\.1:3443; A=admin:admin-demo-password$/);
    const output = execFileSync('sh', ['-e', '-c', moved(calls.join('\n'))], {
      cwd: terminal,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The first call's answer: the APIs, as gateway.yaml writes them.
    expect(output).toMatch(/^\{"value":\[\{"id":"courses",.*\{"id":"guarded",/);

    // The copy changed: the named value's line only, and the API's policy file.
    const configAfter = readFileSync(configFile, 'utf8');
    const changed = configAfter.split('\n').filter((line, index) => line !== configBefore.split('\n')[index]);
    expect(changed).toEqual(['  customer-key: { value: k2, secret: true }']);
    expect(readFileSync(policyFile, 'utf8')).toBe(marking);
    expect(readFileSync(path.join(terminal, 'exported.yaml'), 'utf8')).toContain('x-mark');
    const answer = await fetch(`http://127.0.0.1:${ports.get('8080')}/courses/api/Course`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-mark')).toBe('mine');

    expect(gitStatus()).toBe(statusBefore);
  }, 180_000);
});
