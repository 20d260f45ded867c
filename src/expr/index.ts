/**
 * Policy expressions: the C# subset API Management accepts inside `@( … )` and `@{ … }`, compiled once into
 * closures (hand-written lexer, parser and compiler; no eval, Function or vm). Host objects are reachable only
 * through the member tables in ./library (one file per .NET area, registered in ./library/index.ts).
 */

import { compile } from './compile/compiler.js';
import type { PolicyContext } from './context.js';
import type { ExpressionLimits } from './limits.js';
import type { SourceOrigin } from './origin.js';

export type { PolicyContextInit } from './context.js';
export {
  ApiInfo,
  BodyConsumedError,
  CertificateModel,
  DeploymentInfo,
  decodeUrlPath,
  encodeUrlPath,
  GroupInfo,
  HeaderCollection,
  LastErrorInfo,
  MessageBody,
  OperationInfo,
  PolicyContext,
  ProductInfo,
  QueryCollection,
  RequestModel,
  ResponseModel,
  StringValuesMap,
  SubscriptionInfo,
  UrlModel,
  UserInfo,
  VariablesModel,
} from './context.js';
export type { ExpressionErrorCode } from './errors.js';
export { ExpressionError } from './errors.js';
export { AuthorizationContext } from './library/authorization.js';
export { parseJson } from './library/json/parse.js';
export { JArray, JObject, JProperty, JToken, JValue } from './library/json/tokens.js';
export { Jwt, parseBasic, parseJwt } from './library/jwt.js';
export { dotNetName, nameAttributes } from './library/x509-bytes.js';
export type { ExpressionLimits } from './limits.js';
export { DEFAULT_LIMITS } from './limits.js';
export type { SourceOrigin } from './origin.js';
export { toBoolean, toDotNetString, toInt32 } from './runtime/convert.js';
export { parseDecimalText } from './runtime/decimal.js';
export { formatDateTimeOffset, parseDateTimeOffset } from './runtime/format-date.js';
export { formatDecimal } from './runtime/format-decimal.js';
export {
  CsChar,
  CsDateTime,
  CsDateTimeOffset,
  CsDecimal,
  CsDouble,
  CsGuid,
  CsTimeSpan,
  TICKS_PER_MS,
  TICKS_PER_SECOND,
  UNIX_EPOCH_TICKS,
} from './runtime/values.js';

/** `@( … )` is one C# expression; `@{ … }` is a statement block where every path must `return`. */
export type ExpressionKind = 'expression' | 'block';

export interface CompileOptions {
  kind: ExpressionKind;
  /** Where the text starts in the policy file, for error positions. */
  origin?: SourceOrigin;
  /** Overrides of DEFAULT_LIMITS (unknown keys are a TypeError). */
  limits?: Partial<ExpressionLimits>;
}

export interface CompiledExpression {
  readonly kind: ExpressionKind;
  /** The source text as given (inside the `@( )` / `@{ }`). */
  readonly text: string;
  /**
   * Context paths the expression may read: 'Request.Body', 'Response.Body', 'Request.Headers', 'Variables',
   * 'LastError', … Conservative: an expression that lets `context` escape (assigns it, passes it to a local
   * function) reports '*'. The pipeline asks Envoy for bodies only when a path ending in `.Body` (or '*') is present.
   */
  readonly references: ReadonlySet<string>;
  /**
   * Runs the expression against one request's context. Synchronous. Returns the runtime value (see
   * runtime/values.ts); render it with `toDotNetString`. Throws ExpressionError
   * (ExpressionValueEvaluationFailure or ExpressionLimitExceeded) carrying the position of the failing node.
   */
  evaluate(context: PolicyContext): unknown;
}

/**
 * Parses, checks and compiles one expression. Throws ExpressionError with code ExpressionSyntaxError (or
 * ExpressionLimitExceeded for source size / depth) naming file:line:col, the rule and what was found.
 */
export function compileExpression(text: string, options: CompileOptions): CompiledExpression {
  return compile(text, options.kind, options.origin, options.limits);
}

/** Whether the expression may read the request's or response's body (so the pipeline must ask Envoy for it). */
export function readsBody(expression: CompiledExpression, message: 'Request' | 'Response'): boolean {
  const r = expression.references;
  return r.has('*') || r.has(`${message}.*`) || r.has(`${message}.Body`);
}
