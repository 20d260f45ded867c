/**
 * Checks one parameter or header value against its declaration, as validate-parameters and validate-headers do: one
 * value unless the schema is an array, parsed as the declared type, then validated against the declared schema. The
 * sentences are the "Validation errors" table's (api-management-validation-policy-error-reference.md).
 */
import type { DeclaredParameter } from './operation-definition.js';
import { schemaErrorText, validatorOf } from './validation.js';

/** What the error table calls the value: "query parameter", "path parameter" or "header". */
export type ParameterKind = 'query parameter' | 'path parameter' | 'header';

export interface ParameterProblem {
  readonly rule: 'IncorrectMessage';
  /** The sentence, with the message it is about ("Request" or "Response") filled in. */
  readonly details: string;
  /** What the table gives the client for a request's error (a response's is always the internal error). */
  readonly publicResponse: string;
}

const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The value as the declared scalar type, or undefined when it cannot be read as one. */
function parseScalar(text: string, type: unknown): unknown {
  switch (type) {
    case 'integer':
      return INTEGER.test(text.trim()) ? Number(text) : undefined;
    case 'number':
      return NUMBER.test(text.trim()) ? Number(text) : undefined;
    case 'boolean': {
      const lower = text.trim().toLowerCase();
      return lower === 'true' ? true : lower === 'false' ? false : undefined;
    }
    default:
      return text;
  }
}

/** The declared schema: the full one when the definition gave it, else its scalar type. */
function schemaOf(parameter: DeclaredParameter): Readonly<Record<string, unknown>> {
  return parameter.schema ?? { type: parameter.type };
}

/**
 * The problem with the values a message carries for a declared parameter (none: it conforms). `message` is
 * "Request" or "Response"; a parameter that is absent is a problem only when it is required.
 */
export function checkParameter(
  parameter: DeclaredParameter,
  values: readonly string[] | undefined,
  kind: ParameterKind,
  message: 'Request' | 'Response',
): ParameterProblem | undefined {
  const name = parameter.name;
  const incorrect = (details: string, publicResponse = details): ParameterProblem => ({
    rule: 'IncorrectMessage',
    details,
    publicResponse,
  });
  const title = kind === 'header' ? 'header' : kind;
  if (values === undefined || values.length === 0) {
    return parameter.required
      ? incorrect(
          `Value of the ${title} ${name} does not conform to the definition.\n\nThe ${title} is required.`,
        )
      : undefined;
  }
  const schema = schemaOf(parameter);
  const isArray = schema.type === 'array';
  if (!isArray && values.length > 1)
    return incorrect(`${message} cannot contain multiple values for the ${title} ${name}.`);
  const items = (schema.items ?? {}) as Readonly<Record<string, unknown>>;
  // An array arrives as repeated parameters or as one comma-separated value (OpenAPI's form and simple styles).
  const texts = isArray ? values.flatMap((value) => value.split(',')) : values;
  const parsed = texts.map((text) =>
    parseScalar(text, isArray ? items.type : (schema.type ?? parameter.type)),
  );
  const reason = 'Input string was not in a correct format.';
  if (parsed.some((value) => value === undefined))
    return incorrect(
      `Value of the ${title} ${name} cannot be parsed according to the definition.\n\n${reason}`,
      `Value of the ${title} ${name} couldn't be parsed according to the definition.\n\n${reason}`,
    );
  const validate = validatorOf(schema);
  if (validate(isArray ? parsed : parsed[0])) return undefined;
  const why = `${schemaErrorText(validate.errors)} Line: 0, Position: 0`;
  return incorrect(
    `Value of the ${title} ${name} does not conform to the definition.\n\n${why}`,
    `The value of the ${title} ${name} does not conform to the definition.\n\n${why}`,
  );
}
