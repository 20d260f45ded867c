/**
 * JSONPath (SelectToken / SelectTokens) against hostile paths and random documents. The path comes from the policy
 * and the document from the request, so neither can be trusted: any path over any document either selects tokens
 * of that document or is refused with Newtonsoft's JsonException — never a TypeError, a RangeError or a hang. And a
 * path written from a route that exists in the document, in any of the notations, selects exactly the token there.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJson } from '../../src/expr/library/json/parse.js';
import { selectTokens } from '../../src/expr/library/json/path.js';
import { JArray, JObject, type JToken } from '../../src/expr/library/json/tokens.js';
import { CsException } from '../../src/expr/runtime/core.js';
import { fuzzParameters, testTimeout } from './harness.js';

const BUDGET = { runs: 2000, seconds: 5 };

/** Few names, so that paths written from the same names find something in the document. */
const NAMES = ['a', 'b', 'name', 'items', 'x y', "it's", 'a.b', '*', '$', ''];
const name = fc.oneof(fc.constantFrom(...NAMES), fc.string({ maxLength: 6 }));

/** A JSON value nested a few levels, with objects keyed from NAMES. */
const document = fc
  .letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean()),
      fc.constant(null),
      fc.string({ maxLength: 8 }),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(name, tie('value'), { maxKeys: 4 }),
    ),
  }))
  .value.map((value) => parseJson(JSON.stringify(value)));

/** Pieces of JSONPath: the steps the parser knows, filter operators, literals, and the characters around them. */
const PATH_PIECES = [
  '$',
  '.',
  '..',
  '[',
  ']',
  '*',
  '[*]',
  "'",
  '"',
  'a',
  'b',
  'name',
  'items',
  '0',
  '1',
  '-1',
  '99999999999999999999',
  '[0]',
  '[-1]',
  "['a']",
  '["b"]',
  '?(',
  '@.',
  '@.a',
  '==',
  '!=',
  '>',
  '<=',
  "'x'",
  'true',
  'null',
  ')',
  ' ',
];

const hostilePath = fc.oneof(
  fc.array(fc.constantFrom(...PATH_PIECES), { maxLength: 24 }).map((pieces) => pieces.join('')),
  fc.string({ maxLength: 40 }),
);

/** Whether `token` is `root` or lies inside it. */
function within(root: JToken, token: JToken): boolean {
  for (let at: JToken | null = token; at !== null; at = at.parent) if (at === root) return true;
  return false;
}

/** A step of a route down a document, written in one of the notations JSONPath accepts for it. */
type Step =
  | { kind: 'name'; name: string; bracket: boolean; quote: "'" | '"' }
  | { kind: 'index'; at: number };

function writeStep(step: Step): string {
  if (step.kind === 'index') return `[${step.at}]`;
  return step.bracket ? `[${step.quote}${step.name}${step.quote}]` : `.${step.name}`;
}

/** Dot notation takes a name up to the next '.', '[' or ']', and reads a leading '*' as a wildcard. */
const dotted = (n: string) => n !== '' && !/[.[\]]/.test(n) && !n.startsWith('*');

describe('fuzzing JSONPath', () => {
  it(
    'selects tokens of the document or refuses the path with a JsonException, whatever the path',
    () => {
      fc.assert(
        fc.property(document, hostilePath, (root, path) => {
          let selected: JToken[];
          try {
            selected = selectTokens(root, path);
          } catch (error) {
            if (!(error instanceof CsException)) throw error;
            expect(error.type).toBe('JsonException');
            return;
          }
          for (const token of selected) expect(within(root, token)).toBe(true);
        }),
        fuzzParameters(BUDGET),
      );
    },
    testTimeout(BUDGET),
  );

  it(
    'selects exactly the token a route leads to, in dot, bracket or index notation',
    () => {
      const route = fc.array(
        fc.record({
          pick: fc.nat(),
          bracket: fc.boolean(),
          quote: fc.constantFrom("'" as const, '"' as const),
          fromEnd: fc.boolean(),
        }),
        { maxLength: 6 },
      );
      fc.assert(
        fc.property(document, route, fc.boolean(), (root, choices, dollar) => {
          let target = root;
          let path = dollar ? '$' : '';
          for (const { pick, bracket, quote, fromEnd } of choices) {
            if (target instanceof JArray && target.items.length > 0) {
              const index = pick % target.items.length;
              path += writeStep({ kind: 'index', at: fromEnd ? index - target.items.length : index });
              target = target.items[index]!;
            } else if (target instanceof JObject) {
              // A bracketed name ends at the first ']': such a name can only be written in dot notation.
              const names = [...target.props.keys()].filter(
                (n) => (!bracket && dotted(n)) || !n.includes(']'),
              );
              if (names.length === 0) break;
              const chosen = names[pick % names.length]!;
              const asBracket = bracket || !dotted(chosen);
              path += writeStep({ kind: 'name', name: chosen, bracket: asBracket, quote });
              target = target.get(chosen)!;
            } else break;
          }
          const selected = selectTokens(root, path);
          expect(selected).toHaveLength(1);
          expect(selected[0]).toBe(target);
        }),
        fuzzParameters(BUDGET),
      );
    },
    testTimeout(BUDGET),
  );
});
