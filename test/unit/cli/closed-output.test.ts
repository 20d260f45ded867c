import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../../../bin/portcullis.js', import.meta.url));
const example = fileURLToPath(new URL('../../../examples/courses/gateway.yaml', import.meta.url));

/** Runs the command with its standard output a pipe whose reader has gone (`… | head` once head is done). */
function runIntoClosedPipe(args: readonly string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], {
      env: { ...process.env, PORTCULLIS_DEBUG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 25_000,
    });
    // Closing our end before the command writes makes every write of it fail with EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

describe('a command whose reader closed the pipe (| head)', () => {
  it.each([
    [['policy-reference', '--format', 'json']],
    [['policy-reference']],
    [['envoy-config', '--config', example]],
  ])('portcullis %j stops quietly: no EPIPE stack trace, status 0', async (args) => {
    const outcome = await runIntoClosedPipe(args);
    expect(outcome.stderr).toBe('');
    expect(outcome.status).toBe(0);
  });
});
