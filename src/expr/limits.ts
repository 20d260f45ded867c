/**
 * Resource limits for one compiled expression. API Management has no documented numbers; ours are chosen so that
 * every expression in the public corpus fits with a wide margin while a hostile one cannot pin a core or fill memory.
 */
export interface ExpressionLimits {
  /** Characters of expression source (after named values were substituted). */
  readonly maxSourceLength: number;
  /** Nesting depth of the syntax tree (parenthesised expressions, blocks, lambdas). */
  readonly maxAstDepth: number;
  /** Steps per evaluation: every statement, loop iteration, lambda/function call and LINQ element costs one. */
  readonly maxSteps: number;
  /** Characters in any string an expression builds (concatenation, StringBuilder, Replace, PadLeft, …). */
  readonly maxStringLength: number;
  /** Elements in any array, list, dictionary, JArray or JObject an expression builds. */
  readonly maxCollectionSize: number;
  /**
   * Characters of input a regular expression may be run against. Regexes run on a linear-time engine (re2js): one
   * search costs time proportional to this times the pattern's size, and maxRegexMilliseconds stops it.
   */
  readonly maxRegexInputLength: number;
  /**
   * Milliseconds one evaluation may spend searching with regular expressions (.NET's match timeout:
   * RegexMatchTimeoutException), checked before each search and while one runs (runtime/bounded-search.ts). One
   * search is O(input × pattern) — `(.*a){50}` over 1 Mi characters is 30 s — and Matches/Replace/Split search once
   * per match, which a pattern whose matches look ahead to the end of the input (`a(.*z)?`) makes quadratic.
   */
  readonly maxRegexMilliseconds: number;
}

export const DEFAULT_LIMITS: ExpressionLimits = Object.freeze({
  maxSourceLength: 64 * 1024,
  maxAstDepth: 128,
  maxSteps: 100_000,
  maxStringLength: 4 * 1024 * 1024,
  maxCollectionSize: 100_000,
  maxRegexInputLength: 1024 * 1024,
  // The engine's only thread is held this long, and every request in flight on any API waits as long; a fifth of
  // Envoy's ext_proc message timeout (500 ms) leaves room for a few such requests at once. (It was 250 while it was
  // only checked between searches and one search could run for seconds.)
  maxRegexMilliseconds: 100,
});

export function resolveLimits(overrides: Partial<ExpressionLimits> | undefined): ExpressionLimits {
  if (overrides === undefined) return DEFAULT_LIMITS;
  for (const key of Object.keys(overrides)) {
    if (!Object.hasOwn(DEFAULT_LIMITS, key)) throw new TypeError(`unknown expression limit "${key}"`);
  }
  return Object.freeze({ ...DEFAULT_LIMITS, ...overrides });
}
