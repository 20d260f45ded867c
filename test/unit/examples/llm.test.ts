import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { command } from '../../../src/cli/commands/validate.js';

const example = fileURLToPath(new URL('../../../examples/llm/gateway.yaml', import.meta.url));

/** The AI gateway example (examples/llm) is a configuration `portcullis validate` accepts, policies included. */
describe('examples/llm', () => {
  let out: string[];
  beforeEach(() => {
    out = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
  });
  afterEach(() => vi.restoreAllMocks());

  it('passes portcullis validate with its token-limit and token-metric policy', async () => {
    expect(await command.run([example])).toBe(0);
    expect(out.join('')).toBe('');
  });
});
