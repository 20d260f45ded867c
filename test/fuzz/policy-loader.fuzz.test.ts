/**
 * The policy loader against damaged documents: the public corpus cut, spliced and sprinkled with XML's sharp edges
 * (DOCTYPE and entity declarations, CDATA, comments, stray `&` and `<`, expression and named-value openers). Any text
 * either loads or is refused with diagnostics that point into it (file, line ≥ 1, column ≥ 1, a message) — never an
 * exception, a hang, or an external entity resolved.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validatePolicies } from '../../src/policy/validate.js';
import { fuzzParameters, STACK_FRAME, testTimeout } from './harness.js';

const CORPUS = '/work/shared/corpus/apim-snippets';
const BUDGET = { runs: 1500, seconds: 5 };

function corpusFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? corpusFiles(path) : path.endsWith('.xml') ? [path] : [];
  });
}

const documents = corpusFiles(CORPUS).map((file) => ({
  file: relative(CORPUS, file),
  text: readFileSync(file, 'utf8'),
}));

/** What tends to break XML readers and the expression scanner inside attribute values. */
const SHARP_EDGES = [
  '<',
  '>',
  '&',
  '&amp;',
  '&#0;',
  '&#x110000;',
  '&unknown;',
  '"',
  "'",
  '<![CDATA[',
  ']]>',
  '<!--',
  '-->',
  '<?xml version="1.0"?>',
  '<!DOCTYPE policies [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>',
  '&xxe;',
  '<!ENTITY a "&a;&a;">',
  '@(',
  '@{',
  ')',
  '}',
  '{{',
  '}}',
  '{{missing}}',
  '<base />',
  '<inbound>',
  '</inbound>',
  '<policies>',
  '</policies>',
  '<choose><when condition="@(',
  '\u0000',
  '\uFFFE',
  '\uD800',
];

const edit = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.constantFrom(...SHARP_EDGES) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.string({ maxLength: 8 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), length: fc.nat({ max: 40 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
);

type Edit = typeof edit extends fc.Arbitrary<infer T> ? T : never;

function apply(text: string, edits: readonly Edit[]): string {
  let out = text;
  for (const change of edits) {
    const at = change.at % (out.length + 1);
    if (change.kind === 'insert') out = out.slice(0, at) + change.text + out.slice(at);
    else if (change.kind === 'cut') out = out.slice(0, at) + out.slice(at + change.length);
    else out = out.slice(0, at);
  }
  return out;
}

describe('fuzzing the policy loader', () => {
  it(
    'loads a damaged corpus document or refuses it with diagnostics that point into it',
    () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...documents),
          fc.array(edit, { minLength: 1, maxLength: 6 }),
          (document, edits) => {
            const text = apply(document.text, edits);
            const diagnostics = validatePolicies([{ file: document.file, text }], { scope: 'product' });
            const lines = text.split('\n').length;
            for (const diagnostic of diagnostics) {
              expect(diagnostic.file).toBe(document.file);
              expect(diagnostic.line).toBeGreaterThanOrEqual(1);
              expect(diagnostic.line).toBeLessThanOrEqual(lines + 1);
              expect(diagnostic.column).toBeGreaterThanOrEqual(1);
              expect(diagnostic.message.length).toBeGreaterThan(0);
              expect(diagnostic.message).not.toMatch(STACK_FRAME);
              // An external entity is never read.
              expect(diagnostic.message).not.toContain('root:x:0:0');
            }
          },
        ),
        fuzzParameters(BUDGET),
      );
    },
    testTimeout(BUDGET),
  );

  it(
    'refuses random text with a diagnostic, never an exception',
    () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 300 }), (text) => {
          const diagnostics = validatePolicies([{ file: 'random.xml', text }], { scope: 'api' });
          for (const diagnostic of diagnostics) expect(diagnostic.line).toBeGreaterThanOrEqual(1);
        }),
        fuzzParameters(BUDGET),
      );
    },
    testTimeout(BUDGET),
  );
});
