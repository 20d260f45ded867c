/**
 * Public AI gateway policy documents (fixtures/ai-gateway, sources in its SOURCES.md) load: token limits, token
 * metrics, the semantic cache, content safety and the managed identity that authenticates to Azure OpenAI
 * (identities section) are taken as API Management takes them: no document is refused.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../../src/policy/diagnostics.js';
import { validatePolicies } from '../../../src/policy/validate.js';

const ROOT = fileURLToPath(new URL('./fixtures/ai-gateway', import.meta.url));

/** The values each lab's deployment puts in for its placeholders. */
const PLACEHOLDERS: Readonly<Record<string, string>> = {
  '{backend-id}': 'openai-backend',
  '{tpm}': '1000',
  '{retry-count}': '2',
};

function corpusFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return corpusFiles(path);
    return path.endsWith('.xml') ? [path] : [];
  });
}

describe('public AI gateway documents', () => {
  const files = corpusFiles(ROOT);
  const inputs = files.map((file) => ({
    file: relative(ROOT, file),
    text: Object.entries(PLACEHOLDERS).reduce(
      (text, [placeholder, value]) => text.replaceAll(placeholder, value),
      readFileSync(file, 'utf8'),
    ),
  }));
  // The documents' own scope: API (the samples are API policies; the reference examples fit any scope).
  const diagnostics = validatePolicies(inputs, { scope: 'api' });

  it('holds the nine documents of SOURCES.md', () => {
    expect(files).toHaveLength(9);
  });

  it('loads every document whole, the managed identity that authenticates to Azure OpenAI included', () => {
    expect(diagnostics.map(formatDiagnostic)).toEqual([]);
  });
});
