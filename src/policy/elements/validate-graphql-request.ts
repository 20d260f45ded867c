/**
 * validate-graphql-request: checks a GraphQL API's request — its size, that it is a GraphQL request valid against
 * the API's schema, its depth and field count — and authorizes each field it selects by `<rule path action>`
 * (https://learn.microsoft.com/azure/api-management/validate-graphql-request-policy).
 *
 * A failure is a request error: the request fails (on-error runs) with an errors block and no data block. A removed
 * field is a field error: its error joins the `errors` of the backend's answer. Every error is written to the
 * variable GraphQLErrors and, when named, to `error-variable-name`. The status (400) and LastError.Reason values are Portcullis's: the page documents neither.
 */
import type { GraphQLError } from 'graphql';
import { parseJson } from '../../expr/index.js';
import { defineElement } from '../element.js';
import { bodyText, replaceBody, requestOf } from '../message.js';
import type { NodeSite } from '../node.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { elements, int, oneOf, str } from '../schema.js';
import {
  type GraphqlRequest,
  graphqlJs,
  graphqlRequestOf,
  measure,
  NotGraphqlRequest,
  reachableFragments,
  requestedFields,
  selectedOperation,
  withoutFields,
} from '../shared/graphql.js';
import { authorize, compileRule, RULE_ACTIONS, type Rule } from '../shared/graphql-authorize.js';

/** The largest `max-size` the page allows: 100 KB. */
const MAX_SIZE = 102_400;
/** "The policy can validate GraphQL requests with up to 250 query fields across all levels." */
const MAX_FIELDS = 250;

/** The variable API Management writes every GraphQL validation error to, whatever error-variable-name says. */
export const GRAPHQL_ERRORS_VARIABLE = 'GraphQLErrors';

interface FormattedError {
  readonly message: string;
  readonly locations?: readonly { line: number; column: number }[];
}

export const validateGraphqlRequest = defineElement({
  name: 'validate-graphql-request',
  summary:
    "Validates a GraphQL request against the API's schema (size, depth, fields) and authorizes its fields by path.",
  sections: ['inbound'],
  scopes: ['global', 'workspace', 'product', 'api'],
  oncePerSection: true,
  body: 'read-write',
  attributes: {
    'error-variable-name': str(),
    'max-size': int({ required: true, min: 0, max: MAX_SIZE }),
    'max-depth': int({ default: 6, min: 1 }),
  },
  content: elements({
    name: 'authorize',
    max: 1,
    content: elements({
      name: 'rule',
      attributes: {
        path: str({ required: true, expression: false }),
        action: oneOf(RULE_ACTIONS, { default: 'allow' }),
      },
    }),
  }),
  compile(node, c) {
    const maxSize = node.getter('max-size');
    const maxDepth = node.getter('max-depth');
    const errorVariable = node.getter('error-variable-name');
    const rules: Rule[] = (node.child('authorize')?.childrenNamed('rule') ?? []).flatMap((rule) => {
      const compiled = compileRule(rule.literal('path'), rule.getter('action'));
      if (compiled === undefined) {
        ruleError(c.error, rule, rule.literal('path'));
        return [];
      }
      // A rule that may remove a field adds the field's error to the backend's answer, which must then be held.
      const action = rule.literal('action');
      if (action === undefined || action === 'remove') c.readsResponseBody();
      return [compiled];
    });
    return (run) => {
      const fail = (reason: string, errors: FormattedError[]): never => {
        record(run, errorVariable?.(run), errors);
        throw new PolicyError(
          reason,
          run.redact(errors.map((error) => error.message).join(' ')),
          400,
          undefined,
          [],
          JSON.stringify({ errors }),
        );
      };
      const schema = run.operationDefinition?.graphql?.schema;
      // Inherited from the global or a product scope by an API that is not a GraphQL one (the configuration
      // refuses it at such an API's own scope): nothing of GraphQL to check.
      if (schema === undefined) return 'next';
      const request = requestOf(run, c.target);
      const body = request.method.toUpperCase() === 'GET' ? '' : bodyText(request);
      const limit = within(maxSize(run), 0, MAX_SIZE, 'max-size');
      const size = Buffer.byteLength(body || (request.url.query.get('query')?.[0] ?? ''));
      if (size > limit)
        fail('RequestSizeLimitExceeded', [
          { message: `The request payload is ${size} bytes, more than the ${limit} bytes allowed.` },
        ]);
      let graphqlRequest: GraphqlRequest;
      try {
        graphqlRequest = graphqlRequestOf(
          request.method,
          (name) => request.url.query.get(name)?.[0],
          () => body,
        );
      } catch (error) {
        if (!(error instanceof NotGraphqlRequest)) throw error;
        return fail('InvalidGraphQLRequest', [{ message: error.message }]);
      }
      const graphql = graphqlJs();
      let document: ReturnType<typeof graphql.parse>;
      try {
        document = graphql.parse(graphqlRequest.query);
      } catch (error) {
        // graphql-js's parser recurses: a query nested some thousands deep overflows the stack before any limit.
        if (error instanceof RangeError)
          return fail('GraphQLSyntaxError', [{ message: 'The query is nested too deeply to be read.' }]);
        return fail('GraphQLSyntaxError', [formatted(error as GraphQLError)]);
      }
      const operation = selectedOperation(document, graphqlRequest.operationName);
      // Depth and size first: a query too deep or too wide is refused before the costlier validation.
      const fragments = operation ? reachableFragments(document, operation) : new Map();
      const { depth, fields } = operation
        ? measure(operation.selectionSet, fragments)
        : { depth: 0, fields: 0 };
      const depthLimit = within(maxDepth(run), 1, Number.MAX_SAFE_INTEGER, 'max-depth');
      if (depth > depthLimit)
        fail('QueryDepthExceeded', [
          { message: `The query is ${depth} levels deep, more than the ${depthLimit} allowed.` },
        ]);
      if (fields > MAX_FIELDS)
        fail('QueryFieldsExceeded', [
          {
            message: `The query selects ${fields} fields, more than the ${MAX_FIELDS} that can be validated.`,
          },
        ]);
      const invalid = graphql.validate(schema, document);
      if (invalid.length > 0) fail('GraphQLValidationFailed', invalid.map(formatted));
      if (operation === undefined)
        return fail('GraphQLValidationFailed', [
          {
            message:
              graphqlRequest.operationName === undefined
                ? 'Must provide operation name if query contains multiple operations.'
                : `Unknown operation named "${graphqlRequest.operationName}".`,
          },
        ]);
      const roots = new Set(
        [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((root) =>
          root ? [root.name] : [],
        ),
      );
      const judged = authorize(run, rules, requestedFields(schema, operation, fragments), roots);
      if ('rejected' in judged)
        return fail('FieldRejected', [{ message: `The field "${judged.rejected}" is not authorized.` }]);
      const { removed } = judged;
      if (removed.size === 0) {
        record(run, errorVariable?.(run), []);
        return 'next';
      }
      const fieldErrors = [...removed].map((field) => ({
        message: `The field "${field.name.value}" was removed from the request (not authorized).`,
        locations: field.loc ? [graphql.getLocation(field.loc.source, field.loc.start)] : [],
      }));
      const rewritten = withoutFields(document, operation, removed);
      if (rewritten === undefined) return fail('AllFieldsRemoved', fieldErrors);
      record(run, errorVariable?.(run), fieldErrors);
      sendQuery(run, c.target, graphqlRequest, body, graphql.print(rewritten));
      run.responseEdits.push((answered) => addFieldErrors(answered, fieldErrors));
      return 'next';
    };
  },
});

function ruleError(
  error: (node: NodeSite, code: 'attribute', message: string) => void,
  at: NodeSite,
  path: string,
) {
  error(
    at,
    'attribute',
    `validate-graphql-request/authorize/rule/@path must be /type/field, /type/*, /field or /__*, got "${path}"`,
  );
}

function sendQuery(
  run: RunContext,
  target: Parameters<typeof requestOf>[1],
  request: GraphqlRequest,
  body: string,
  query: string,
): void {
  if (request.carrier === 'query-string') {
    requestOf(run, target).url.query.set('query', query);
    return;
  }
  replaceBody(run, target, JSON.stringify({ ...(JSON.parse(body) as object), query }));
}

/**
 * The removed fields' errors added to the `errors` of the backend's JSON answer (created when it has none), as a
 * GraphQL server reports a field error beside the data; an answer that is not a JSON object is left as it is.
 */
function addFieldErrors(run: RunContext, errors: readonly FormattedError[]): void {
  const response = run.context.response;
  if (response === null || response === undefined || response.body === null) return;
  let answer: unknown;
  try {
    answer = JSON.parse(bodyText(response));
  } catch {
    return;
  }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return;
  const record = answer as Record<string, unknown>;
  record.errors = [...(Array.isArray(record.errors) ? record.errors : []), ...errors];
  replaceBody(run, 'response', JSON.stringify(record));
}

/** The errors, as the response's errors block has them, in GraphQLErrors and the named variable. */
function record(run: RunContext, variable: string | undefined, errors: readonly FormattedError[]): void {
  const value = parseJson(JSON.stringify(errors));
  run.context.variables.set(GRAPHQL_ERRORS_VARIABLE, value);
  if (variable !== undefined && variable !== '') run.context.variables.set(variable, value);
}

function formatted(error: GraphQLError): FormattedError {
  return error.locations
    ? { message: error.message, locations: error.locations }
    : { message: error.message };
}

/** An attribute an expression gave, checked against the range a literal is checked against at load. */
function within(value: number, min: number, max: number, name: string): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new RangeError(
      `validate-graphql-request/@${name} must be an integer from ${min} to ${max}, got ${value}`,
    );
  return value;
}
