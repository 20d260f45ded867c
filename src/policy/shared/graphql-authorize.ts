/**
 * The `<authorize>` rules of validate-graphql-request: each `<rule path action>` compiled once, and a request's fields
 * judged by them (https://learn.microsoft.com/azure/api-management/validate-graphql-request-policy, "Request
 * actions"): for each field, of the rules whose path matches it, the most specific decides; `ignore` passes to the
 * next.
 */
import type { FieldNode } from 'graphql';
import type { RunContext } from '../runtime.js';
import type { RequestedField } from './graphql.js';

export const RULE_ACTIONS = ['allow', 'remove', 'reject', 'ignore'] as const;
type RuleAction = (typeof RULE_ACTIONS)[number];

/** `/__*` (the introspection system), `/Type/field`, `/Type/*`, or `/field` (a field of a root type). */
const RULE_PATH = /^\/(?:__\*|[_A-Za-z][_0-9A-Za-z]*(?:\/(?:[_A-Za-z][_0-9A-Za-z]*|\*))?)$/;

export interface Rule {
  /** Undefined for `/field` (any root type) and `/__*`. */
  readonly type: string | undefined;
  /** Undefined for `/Type/*`; `__*` for the introspection system. */
  readonly field: string | undefined;
  /** Exact field 3, a type's every field 2, a root field by name 2, the introspection system 1. */
  readonly specificity: number;
  readonly action: (run: RunContext) => RuleAction;
}

/** A rule, or undefined when its path has none of the four shapes. */
export function compileRule(
  path: string,
  action: ((run: RunContext) => string) | undefined,
): Rule | undefined {
  if (!RULE_PATH.test(path)) return undefined;
  const actionOf = (run: RunContext): RuleAction => {
    const value = action?.(run) ?? 'allow';
    if ((RULE_ACTIONS as readonly string[]).includes(value)) return value as RuleAction;
    // A TypeError: the runner reports it as an expression's invalid value (ExpressionValueEvaluationFailure).
    throw new TypeError(
      `validate-graphql-request/authorize/rule/@action must be one of ${RULE_ACTIONS.join(', ')}, got "${value}"`,
    );
  };
  if (path === '/__*') return { type: undefined, field: '__*', specificity: 1, action: actionOf };
  const [, first, second] = path.split('/');
  if (second === undefined) return { type: undefined, field: first, specificity: 2, action: actionOf };
  return {
    type: first,
    field: second === '*' ? undefined : second,
    specificity: second === '*' ? 2 : 3,
    action: actionOf,
  };
}

/**
 * The fields to remove, or the first field a `reject` refuses (`Type.field`). `roots` are the names of the schema's
 * root operation types, which a `/field` rule is about.
 */
export function authorize(
  run: RunContext,
  rules: readonly Rule[],
  fields: readonly RequestedField[],
  roots: ReadonlySet<string>,
): { readonly removed: Set<FieldNode> } | { readonly rejected: string } {
  const removed = new Set<FieldNode>();
  if (rules.length === 0) return { removed };
  const ordered = [...rules].sort((a, b) => b.specificity - a.specificity);
  for (const { type, field, node } of fields) {
    const matching = ordered.filter((rule) =>
      rule.field === '__*'
        ? field.startsWith('__')
        : rule.type === undefined
          ? roots.has(type) && rule.field === field
          : rule.type === type && (rule.field === undefined || rule.field === field),
    );
    for (const rule of matching) {
      const action = rule.action(run);
      if (action === 'ignore') continue;
      if (action === 'reject') return { rejected: `${type}.${field}` };
      if (action === 'remove') removed.add(node);
      break;
    }
  }
  return { removed };
}
