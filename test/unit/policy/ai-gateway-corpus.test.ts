/**
 * Public AI gateway policy documents (fixtures/ai-gateway, sources in its SOURCES.md) load: the semantic cache and
 * content safety elements are taken as API Management takes them, and a document is rejected only for an element
 * that needs Azure (authentication-managed-identity), named in the message.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validatePolicies } from '../../../src/policy/validate.js';

const ROOT = fileURLToPath(new URL('./fixtures/ai-gateway', import.meta.url));

function corpusFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return corpusFiles(path);
    return path.endsWith('.xml') ? [path] : [];
  });
}

describe('public AI gateway documents', () => {
  const files = corpusFiles(ROOT);
  const inputs = files.map((file) => ({ file: relative(ROOT, file), text: readFileSync(file, 'utf8') }));
  // The documents' own scope: API (the samples are API policies; the reference examples fit any scope).
  const diagnostics = validatePolicies(inputs, { scope: 'api' });

  it('holds the five documents of SOURCES.md', () => {
    expect(files).toHaveLength(5);
  });

  it('rejects nothing but authentication-managed-identity (needs Azure), named in the message', () => {
    expect(
      diagnostics.map((d) => `${d.file.split('/').slice(-2).join('/')}:${d.line}: ${d.code}: ${d.message}`),
    ).toEqual([
      'content-filtering/prompt-shield-policy.xml:7: not-supported: "authentication-managed-identity" is not supported: needs Azure managed identity',
      'semantic-caching/policy.xml:4: not-supported: "authentication-managed-identity" is not supported: needs Azure managed identity',
    ]);
  });
});
