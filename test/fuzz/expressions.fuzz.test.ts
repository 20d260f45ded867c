/**
 * The expression compiler and evaluator against hostile text: random token soup, random characters, corpus
 * expressions cut and spliced, and deep nesting. Whatever the text, compiling either succeeds or throws an
 * ExpressionError with a position, and evaluating either returns or throws an ExpressionError — never a TypeError,
 * a RangeError (stack overflow), a hang or a runaway allocation that would take the engine down.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileExpression, ExpressionError } from '../../src/expr/index.js';
import { makeContext } from '../doubles/policy-context.js';
import { findExpressions } from '../fixtures/expression-scan.js';
import { fuzzParameters, testTimeout } from './harness.js';

const CORPUS = '/work/shared/corpus/apim-snippets';
const BUDGET = { runs: 3000, seconds: 5 };

function corpusFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? corpusFiles(path) : path.endsWith('.xml') ? [path] : [];
  });
}

/** The corpus's expressions with named values replaced by a number, as seeds for mutation. */
const corpusExpressions = corpusFiles(CORPUS).flatMap((file) =>
  findExpressions(readFileSync(file, 'utf8')).map((found) => ({
    kind: found.kind,
    text: found.text.replace(/\{\{[^}]*\}\}/g, '1'),
  })),
);

/** Pieces of C# as policy expressions use it: names of the allow-list, literals, operators and punctuation. */
const TOKENS = [
  'context',
  '.',
  'Request',
  'Response',
  'Headers',
  'Body',
  'As',
  '<',
  '>',
  'string',
  'JObject',
  'JArray',
  'GetValueOrDefault',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ',',
  ';',
  '"a"',
  '"',
  "'c'",
  '@"v"',
  '$"{x}"',
  '0',
  '1',
  '-1',
  '2147483647',
  '1e308',
  '0.5m',
  'null',
  'true',
  'false',
  'new',
  'var',
  'x',
  '=',
  '==',
  '!=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '&&',
  '||',
  '!',
  '?',
  ':',
  '??',
  '=>',
  'return',
  'if',
  'else',
  'for',
  'foreach',
  'in',
  'while',
  'int',
  'Parse',
  'Regex',
  'IsMatch',
  'Replace',
  'Split',
  'Join',
  'Substring',
  'PadLeft',
  'Repeat',
  'Enumerable',
  'Range',
  'Select',
  'Where',
  'ToArray',
  'Count',
  'DateTime',
  'UtcNow',
  'AddDays',
  'TimeSpan',
  'Convert',
  'FromBase64String',
  'Encoding',
  'UTF8',
  'GetString',
  'Variables',
  'Url',
  'Query',
  'Path',
  'typeof',
  'is',
  'as',
  'default',
  'checked',
  'unchecked',
  'StringBuilder',
  'Append',
  'ToString',
  'Guid',
  'NewGuid',
  'Math',
  'Max',
  'Jwt',
  'AsJwt',
  'Claims',
  'System',
  'Text',
  'Xml',
  'Linq',
  'XElement',
  'Parse',
  'Value',
  ' ',
];

const tokenSoup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 40 }).map((tokens) => tokens.join(''));

/** A corpus expression with a slice cut out, or a token or random text spliced in. */
const mutatedCorpus = fc
  .tuple(
    fc.constantFrom(...corpusExpressions),
    fc.nat(),
    fc.nat({ max: 20 }),
    fc.oneof(fc.constantFrom(...TOKENS), fc.string({ maxLength: 6 })),
  )
  .map(([seed, at, cut, insert]) => {
    const position = at % (seed.text.length + 1);
    return { kind: seed.kind, text: seed.text.slice(0, position) + insert + seed.text.slice(position + cut) };
  });

/** Nesting far past the depth limit, in each construct that recurses in the parser. */
const deepNesting = fc
  .tuple(
    fc.integer({ min: 100, max: 20_000 }),
    fc.constantFrom('(', '!', '-', '(int)', 'new[]{', 'x=>', '[', '"a"+'),
  )
  .map(([depth, opener]) => opener.repeat(depth) + '1');

const expressionText = fc.oneof(
  fc.record({ kind: fc.constantFrom('expression' as const, 'block' as const), text: tokenSoup }),
  fc.record({
    kind: fc.constantFrom('expression' as const, 'block' as const),
    text: fc.string({ maxLength: 200 }),
  }),
  fc.record({ kind: fc.constant('expression' as const), text: deepNesting }),
  mutatedCorpus,
);

/** Throws what is not an ExpressionError; an ExpressionError must say where. */
function onlyExpressionErrors(run: () => void): void {
  try {
    run();
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    expect(error.message.length).toBeGreaterThan(0);
  }
}

describe('fuzzing policy expressions', () => {
  it(
    'compiles or refuses any text with an ExpressionError, and evaluates or fails with one',
    () => {
      const context = makeContext();
      fc.assert(
        fc.property(expressionText, ({ kind, text }) => {
          onlyExpressionErrors(() => {
            const compiled = compileExpression(text, { kind });
            onlyExpressionErrors(() => compiled.evaluate(context));
          });
        }),
        fuzzParameters(BUDGET),
      );
    },
    testTimeout(BUDGET),
  );

  it(
    'keeps every corpus expression within its limits when run against a random request',
    () => {
      // Each compiles (the corpus suite checks that) and must run to a value or an ExpressionError on any body.
      const compiled = corpusExpressions.flatMap(({ kind, text }) => {
        try {
          return [compileExpression(text, { kind })];
        } catch {
          return [];
        }
      });
      expect(compiled.length).toBeGreaterThan(400);
      fc.assert(
        fc.property(
          fc.constantFrom(...compiled),
          fc.oneof(fc.string({ maxLength: 300 }), fc.json({ maxDepth: 4 })),
          (expression, body) => {
            onlyExpressionErrors(() => expression.evaluate(makeContext(body)));
          },
        ),
        fuzzParameters(BUDGET),
      );
    },
    testTimeout(BUDGET),
  );
});
