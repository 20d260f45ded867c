/**
 * What the four content validation policies share (validate-content, validate-parameters, validate-headers,
 * validate-status-code), as "Content validation policies" documents it
 * (learn.microsoft.com/azure/api-management/validation-policies; the actions and the error table are the includes
 * api-management-validation-policy-actions.md and api-management-validation-policy-error-reference.md of
 * MicrosoftDocs/azure-docs @ 60a891b2):
 *
 * - an action per kind of check: `ignore` skips it, `detect` logs the error and goes on, `prevent` logs it, stops
 *   the request or response and returns an error (400 in inbound, 502 elsewhere; LastError.Reason "Bad request" or
 *   "Response not allowed"; LastError.Message the error's Details, the client the error's public response);
 * - errors `{ Name, Type, ValidationRule, Details, Action }`, logged and written to `errors-variable-name`;
 * - JSON Schema validation of a value or a body.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { parseJson } from '../../expr/index.js';
import type { CompileContext } from '../element.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { type AttributeSpec, oneOf } from '../schema.js';

export const ACTIONS = ['ignore', 'prevent', 'detect'] as const;
export type Action = (typeof ACTIONS)[number];

/** An action attribute: one of the three, or an expression that gives one. */
export const action = <const O extends Omit<Partial<AttributeSpec>, 'kind' | 'values' | 'default'>>(o: O) =>
  oneOf(ACTIONS, o);

/** The public response of every error the client must not see the details of. */
export const INTERNAL_ERROR =
  'The request could not be processed due to an internal error. Contact the API owner.';

export interface ValidationError {
  /** The parameter, header, content type or status code the error is about; null when there is none. */
  readonly name: string | null;
  /** RequestBody, ResponseBody, QueryParameter, PathParameter, RequestHeader, ResponseHeader, StatusCode, ApiSchema. */
  readonly type: string;
  /** SizeLimit, Unspecified, MissingDefinition, IncorrectMessage, ValidationException, ValidationError; null for ApiSchema. */
  readonly rule: string | null;
  readonly details: string;
  /** What the client is told when the error stops the request (never more than the documented public response). */
  readonly publicResponse: string;
  readonly action: Action;
}

/** A getter of an action attribute (`label`: `element/@name`), checked at run time when an expression gives it. */
export function actionGetter(getter: (run: RunContext) => string, label: string): (run: RunContext) => Action;
export function actionGetter(
  getter: ((run: RunContext) => string) | undefined,
  label: string,
): ((run: RunContext) => Action) | undefined;
export function actionGetter(
  getter: ((run: RunContext) => string) | undefined,
  label: string,
): ((run: RunContext) => Action) | undefined {
  if (getter === undefined) return undefined;
  return (run) => {
    const value = getter(run);
    if ((ACTIONS as readonly string[]).includes(value)) return value as Action;
    // A TypeError: the runner reports it as an expression's invalid value (ExpressionValueEvaluationFailure).
    throw new TypeError(`${label} must be one of ${ACTIONS.join(', ')}, got "${value}"`);
  };
}

/** No operation matched, so there is no definition to validate against. */
export function apiSchemaError(action: Action): ValidationError {
  return {
    name: null,
    type: 'ApiSchema',
    rule: null,
    details: "API's schema does not exist or it could not be resolved.",
    publicResponse: INTERNAL_ERROR,
    action,
  };
}

/**
 * Records what one run of a validation policy found: every error that is not ignored is logged and written to the
 * errors variable (a JArray of the documented objects, so an expression or a trace can read it); the first error
 * whose action is `prevent` then stops the pipeline.
 */
export function settle(
  run: RunContext,
  element: string,
  inbound: boolean,
  errorsVariable: string | undefined,
  found: readonly ValidationError[],
): void {
  const errors = found.filter((error) => error.action !== 'ignore');
  const documented = errors.map((error) => ({
    Name: error.name,
    Type: error.type,
    ValidationRule: error.rule,
    Details: run.redact(error.details),
    Action: error.action,
  }));
  if (errorsVariable !== undefined)
    run.context.variables.set(errorsVariable, parseJson(JSON.stringify(documented)));
  for (const error of documented) {
    run.services.logger.info('validation error', {
      requestId: run.context.requestId.value,
      policy: element,
      ...error,
    });
  }
  const stop = errors.find((error) => error.action === 'prevent');
  if (stop === undefined) return;
  throw new PolicyError(
    inbound ? 'Bad request' : 'Response not allowed',
    run.redact(stop.details),
    inbound ? 400 : 502,
    stop.publicResponse,
  );
}

/** Whether this statement validates the request (inbound) or the response (outbound, on-error). */
export const validatesRequest = (c: CompileContext): boolean => c.section === 'inbound';

// ---------------------------------------------------------------------------------------------------------
// JSON Schema

/*
 * One validator for every schema of every definition: the importers convert OpenAPI 3.0 and Swagger 2.0 schemas to
 * JSON Schema 2020-12. A schema is compiled the first time a request needs it and kept as long as the configuration
 * that holds it (the cache is keyed by the schema object itself).
 *
 * `format` is checked, as the validate-content page documents ("The format of the properties, if specified in the
 * schema"): the JSON Schema formats (date-time, date, time, duration, email, hostname, ipv4, ipv6, uri,
 * uri-reference, uri-template, uuid, regex, json-pointer…) and OpenAPI's (int32, int64, float, double, byte, binary,
 * password) as ajv-formats defines them in its full mode. A format neither knows is ignored, as JSON Schema says and
 * Json.NET Schema does (`logger: false`: not a warning per schema).
 */
let ajv: Ajv2020 | undefined;

/**
 * The validator, made when the first schema is compiled: making it (and adding the formats) costs ~15 ms, which every
 * process start paid before, whether or not a policy validated anything.
 */
function validator(): Ajv2020 {
  if (ajv === undefined) {
    ajv = new Ajv2020({ strict: false, allErrors: false, logger: false });
    // ajv-formats is CommonJS whose module object is the plugin and has it as `default` too: Node and the bundle agree.
    ajvFormats.default(ajv);
  }
  return ajv;
}
const compiled = new WeakMap<object, Map<string, ValidateFunction>>();

/** `allow-additional-properties`: true or false overrides the schema's own `additionalProperties` everywhere. */
export type AdditionalProperties = boolean | undefined;

export function validatorOf(
  schema: Readonly<Record<string, unknown>>,
  additional: AdditionalProperties = undefined,
): ValidateFunction {
  const key = String(additional);
  let byOverride = compiled.get(schema);
  if (byOverride === undefined) {
    byOverride = new Map();
    compiled.set(schema, byOverride);
  }
  let validate = byOverride.get(key);
  if (validate === undefined) {
    validate = validator().compile(
      additional === undefined ? schema : overrideAdditional(schema, additional),
    );
    byOverride.set(key, validate);
  }
  return validate;
}

/** A copy of `schema` whose object schemas all allow (true) or forbid (false) properties they do not list. */
function overrideAdditional(schema: unknown, allow: boolean): Record<string, unknown> {
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'additionalProperties' || key === 'unevaluatedProperties') continue;
      // `properties` and `$defs` map names to schemas; their keys are names, not keywords.
      out[key] =
        key === 'properties' || key === '$defs' || key === 'definitions' || key === 'patternProperties'
          ? Object.fromEntries(Object.entries(inner as object).map(([name, s]) => [name, visit(s)]))
          : visit(inner);
    }
    const isObjectSchema = out.type === 'object' || (out.type === undefined && 'properties' in out);
    if (!allow && isObjectSchema) out.additionalProperties = false;
    return out;
  };
  return visit(schema) as Record<string, unknown>;
}

/** The first error of a failed validation, as a sentence: where in the value, and what is wrong. */
export function schemaErrorText(errors: readonly ErrorObject[] | null | undefined): string {
  const error = errors?.[0];
  if (error === undefined) return 'The value does not match the schema.';
  const extra =
    error.keyword === 'additionalProperties'
      ? ` ("${String((error.params as { additionalProperty?: unknown }).additionalProperty)}")`
      : '';
  return `${error.instancePath === '' ? 'The value' : `Property ${error.instancePath}`} ${error.message ?? 'is invalid'}${extra}.`;
}

/** The name a definition's schema goes by: the component it refers to, else its title. */
export function definitionName(schema: Readonly<Record<string, unknown>>, fallback: string): string {
  const ref = schema.$ref;
  if (typeof ref === 'string') return decodeURIComponent(ref.slice(ref.lastIndexOf('/') + 1));
  return typeof schema.title === 'string' ? schema.title : fallback;
}
