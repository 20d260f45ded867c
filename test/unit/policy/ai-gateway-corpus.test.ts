/**
 * Public AI gateway policies (Azure-Samples/AI-Gateway, see fixtures/ai-gateway/SOURCES.md) load: their token
 * limits and token metrics compile, and a document is refused only for an element that needs Azure (the managed
 * identity that authenticates to Azure OpenAI), named in the message.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../../src/policy/diagnostics.js';
import { validatePolicies } from '../../../src/policy/validate.js';

const FOLDER = new URL('./fixtures/ai-gateway/', import.meta.url);

/** The values each lab's deployment puts in for its placeholders. */
const PLACEHOLDERS: Readonly<Record<string, string>> = {
  '{backend-id}': 'openai-backend',
  '{tpm}': '1000',
  '{retry-count}': '2',
};

const files = readdirSync(FOLDER).filter((name) => name.endsWith('.xml'));
const inputs = files.map((file) => ({
  file,
  text: Object.entries(PLACEHOLDERS).reduce(
    (text, [placeholder, value]) => text.replaceAll(placeholder, value),
    readFileSync(new URL(file, FOLDER), 'utf8'),
  ),
}));

describe('public AI gateway corpus', () => {
  const diagnostics = validatePolicies(inputs, { scope: 'api' });

  it('holds the four lab documents', () => {
    expect(files.sort()).toEqual([
      'finops-framework-openai.policy.xml',
      'progressive-policies-3.policy.xml',
      'token-metrics-emitting.policy.xml',
      'token-rate-limiting.policy.xml',
    ]);
  });

  it('refuses nothing but the Azure managed identity, named in the message', () => {
    const others = diagnostics.filter(
      (d) => !(d.code === 'not-supported' && d.message.startsWith('"authentication-managed-identity"')),
    );
    expect(others.map(formatDiagnostic)).toEqual([]);
    expect(new Set(diagnostics.map((d) => d.file))).toEqual(
      new Set([
        'finops-framework-openai.policy.xml',
        'progressive-policies-3.policy.xml',
        'token-metrics-emitting.policy.xml',
      ]),
    );
  });

  it('loads the token-limit lab whole', () => {
    expect(diagnostics.filter((d) => d.file === 'token-rate-limiting.policy.xml')).toEqual([]);
  });
});
