import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UsageError } from '../../../src/cli/command.js';
import { command } from '../../../src/cli/commands/differences.js';
import { BECAUSE, DIFFERENCES } from '../../../src/policy/differences.js';

const cli = fileURLToPath(new URL('../../../bin/portcullis.js', import.meta.url));
const doc = fileURLToPath(new URL('../../../docs/differences.md', import.meta.url));

describe('portcullis differences', () => {
  let out: string[];
  beforeEach(() => {
    out = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
  });
  afterEach(() => vi.restoreAllMocks());

  it('is what docs/differences.md holds (regenerate: portcullis differences > docs/differences.md)', async () => {
    expect(await command.run([])).toBe(0);
    expect(out.join('')).toBe(readFileSync(doc, 'utf8'));
  });

  it('gives every difference one row with its reason', async () => {
    expect(await command.run([])).toBe(0);
    const rows = out
      .join('')
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| where '));
    expect(rows).toHaveLength(DIFFERENCES.length);
    DIFFERENCES.forEach((d, i) => {
      expect(rows[i]).toContain(`| ${BECAUSE[d.because]}: `);
    });
  });

  it('refuses arguments', async () => {
    await expect(command.run(['--format', 'json'])).rejects.toThrow(
      new UsageError('differences takes no arguments, got "--format json"'),
    );
  });
});

describe('the portcullis command', () => {
  it('lists differences and runs it', async () => {
    const run = promisify(execFile);
    const { stdout: help } = await run(process.execPath, [cli, '--help']);
    expect(help).toMatch(/^ {2}differences {2}/m);
    const { stdout } = await run(process.execPath, [cli, 'differences']);
    expect(stdout).toBe(readFileSync(doc, 'utf8'));
  });
});
