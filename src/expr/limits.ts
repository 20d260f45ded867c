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
  /** Characters of input a single regular expression may be run against (JS regexes cannot be interrupted). */
  readonly maxRegexInputLength: number;
}

export const DEFAULT_LIMITS: ExpressionLimits = Object.freeze({
  maxSourceLength: 64 * 1024,
  maxAstDepth: 128,
  maxSteps: 100_000,
  maxStringLength: 4 * 1024 * 1024,
  maxCollectionSize: 100_000,
  maxRegexInputLength: 1024 * 1024,
});

export function resolveLimits(overrides: Partial<ExpressionLimits> | undefined): ExpressionLimits {
  if (overrides === undefined) return DEFAULT_LIMITS;
  for (const key of Object.keys(overrides)) {
    if (!Object.hasOwn(DEFAULT_LIMITS, key)) throw new TypeError(`unknown expression limit "${key}"`);
  }
  return Object.freeze({ ...DEFAULT_LIMITS, ...overrides });
}
