/**
 * Public AI gateway policy documents (fixtures/ai-gateway, sources in its SOURCES.md) load: token limits, token
 * metrics, the semantic cache and content safety are taken as API Management takes them, and a document is refused
 * only for an element that needs Azure (the managed identity that authenticates to Azure OpenAI), named in the
 * message.
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

  it('refuses nothing but authentication-managed-identity (needs Azure), named in the message', () => {
    const others = diagnostics.filter(
      (d) => !(d.code === 'not-supported' && d.message.startsWith('"authentication-managed-identity"')),
    );
    expect(others.map(formatDiagnostic)).toEqual([]);
    expect(new Set(diagnostics.map((d) => d.file.split('/').slice(-2).join('/')))).toEqual(
      new Set([
        'content-filtering/prompt-shield-policy.xml',
        'semantic-caching/policy.xml',
        'finops-framework/openai-policy.xml',
        'progressive-policies-1/policy-3.xml',
        'token-metrics-emitting/policy.xml',
      ]),
    );
  });
});
