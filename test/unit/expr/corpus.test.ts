import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileExpression, ExpressionError } from '../../../src/expr/index.js';
import { findExpressions } from '../../fixtures/expression-scan.js';

const CORPUS = '/work/shared/corpus/apim-snippets';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.xml') ? [p] : [];
  });
}

/**
 * Expressions that are expected not to compile, by file and line, with the reason. Keep this list short: each entry
 * is either an Azure-only type or an error in the sample itself.
 */
const EXPECTED_FAILURES: Record<string, string> = {
  // Types outside API Management's allow-list (reference §3.2) or needing Azure: rejected by name.
  'Azure+api-management-policy-snippets/examples/Extract value from XML.xml:15':
    'XmlReader is not an allowed type',
  'Azure+api-management-policy-snippets/examples/Get OAuth2 access token from AAD using client id and certificate using key vault manage identity.xml:40':
    'RSACng is not an allowed type (RSA and GetRSAPrivateKey are; the Key Vault certificate is PKCS#12, not read here)',
  'Azure+api-management-policy-snippets/examples/Return a blob URL signed with a user delegation SAS token.xml:75':
    'XmlDocument is not an allowed type',
  // Samples whose C# is broken as published: a string literal directly followed by an empty string literal.
  'Azure+api-management-policy-snippets/examples/Call out to an HTTP endpoint and cache the response.policy.xml:16':
    'broken sample',
  'Azure+api-management-policy-snippets/examples/Call out to an HTTP endpoint and cache the response.policy.xml:31':
    'broken sample',
  'Azure+api-management-policy-snippets/examples/Call out to an HTTP endpoint and cache the response.policy.xml:35':
    'broken sample',
  'Azure+api-management-policy-snippets/examples/Loopback request for service at same API Management service.xml:15':
    'broken sample',
  'Azure+api-management-policy-snippets/examples/Pre-authorize requests based on HTTP method with validate-jwt.policy.xml:10':
    'broken sample',
  'Azure+api-management-policy-snippets/examples/Pre-authorize requests based on HTTP method with validate-jwt.policy.xml:22':
    'broken sample',
};

/** `{{name}}` is replaced textually before compiling; a value used as code stands for a number here. */
function substituteNamedValues(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' && text[i - 1] !== '\\') inString = !inString;
    if (c === '{' && text[i + 1] === '{') {
      const end = text.indexOf('}}', i);
      if (end > 0) {
        out += inString ? `nv-${text.slice(i + 2, end)}` : '1';
        i = end + 1;
        continue;
      }
    }
    out += c;
  }
  return out;
}

describe('every expression in the public policy corpus compiles', () => {
  const all = files(CORPUS).flatMap((f) => {
    const xml = readFileSync(f, 'utf8');
    return findExpressions(xml).map((e) => ({ ...e, file: relative(CORPUS, f) }));
  });

  it('finds the corpus expressions', () => {
    expect(all.length).toBeGreaterThan(400);
  });

  it('compiles them', () => {
    const failures: string[] = [];
    for (const e of all) {
      // Named values are substituted textually before compiling, as API Management does.
      const text = substituteNamedValues(e.text);
      try {
        compileExpression(text, { kind: e.kind, origin: { file: e.file, line: e.line, column: e.column } });
      } catch (err) {
        if (!(err instanceof ExpressionError)) throw err;
        const key = `${e.file}:${e.line}`;
        if (EXPECTED_FAILURES[key]) continue;
        failures.push(`[${key}] ${err.message.split('\n')[0]!}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
