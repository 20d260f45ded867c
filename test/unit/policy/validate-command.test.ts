import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { command } from '../../../src/cli/commands/validate.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/validate/${name}`, import.meta.url));

describe('portcullis validate', () => {
  let out: string[];
  beforeEach(() => {
    out = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
  });
  afterEach(() => vi.restoreAllMocks());

  it('exits 0 for clean documents (fragments among the files are found by name)', async () => {
    const code = await command.run([
      '--named-values',
      fixture('named-values.yaml'),
      fixture('good.xml'),
      fixture('tagging.xml'),
    ]);
    expect(out.join('')).toBe('ok: 2 policies\n');
    expect(code).toBe(0);
  });

  it('prints file:line:col messages and exits 1, never showing a secret', async () => {
    const code = await command.run(['--named-values', fixture('named-values.yaml'), fixture('bad.xml')]);
    expect(code).toBe(1);
    expect(out.join('').trim().split('\n')).toEqual([
      `${fixture('bad.xml')}:3:9: policies/inbound/set-heder[1]: unknown policy element <set-heder> (did you mean "set-header"?)`,
      `${fixture('bad.xml')}:4:27: policies/inbound/set-status[2]: set-status/@code must be an integer, got "***"`,
    ]);
  });

  it('reports a named value that is not defined', async () => {
    const code = await command.run([fixture('good.xml'), fixture('tagging.xml')]);
    expect(code).toBe(1);
    expect(out.join('')).toBe(`${fixture('good.xml')}:5:20: named value "api-key" is not defined\n`);
  });

  it('checks placement for the given scope', async () => {
    await expect(command.run(['--scope', 'tenant', fixture('good.xml')])).rejects.toThrow(
      '--scope must be one of',
    );
  });
});
