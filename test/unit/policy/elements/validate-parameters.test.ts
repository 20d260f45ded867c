import { describe, expect, it } from 'vitest';
import type { JToken } from '../../../../src/expr/index.js';
import { writeJson } from '../../../../src/expr/library/json/write.js';
import type { RequestDescription } from '../../../../src/policy/runner.js';
import type { OperationDefinition } from '../../../../src/policy/shared/operation-definition.js';
import { inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

// learn.microsoft.com/azure/api-management/validate-parameters-policy; errors: the "Validation errors" table
// (includes/api-management-validation-policy-error-reference.md).

const definition: OperationDefinition = {
  templateParameters: [{ name: 'id', required: true, type: 'integer' }],
  queryParameters: [
    { name: 'limit', required: false, type: 'integer', schema: { type: 'integer', maximum: 50 } },
    { name: 'tags', required: false, type: 'string', schema: { type: 'array', items: { type: 'string' } } },
    { name: 'q', required: true, type: 'string' },
  ],
  headerParameters: [{ name: 'X-Trace', required: false, type: 'boolean' }],
  responses: [],
};

function get(query: string, headers: [string, string][] = [], id = '7'): Partial<RequestDescription> {
  return {
    url: `https://gw.example.com/api/items/${id}${query}`,
    headers,
    matchedParameters: { id },
    definition,
  };
}

const errorsOf = (context: { variables: { get(name: string): unknown } }) =>
  JSON.parse(writeJson(null, context.variables.get('errs') as JToken, false));

const policy = (specified: string, unspecified: string, inner = '') =>
  `<validate-parameters specified-parameter-action="${specified}" unspecified-parameter-action="${unspecified}" errors-variable-name="errs">${inner}</validate-parameters>`;

describe('validate-parameters', () => {
  it('lets a request whose parameters conform through', async () => {
    const { outcome, context } = await inbound(
      policy('prevent', 'prevent'),
      get('?q=a&limit=10&tags=a,b', [['X-Trace', 'true']]),
    );
    expect(outcome.kind).toBe('forward');
    expect(errorsOf(context)).toEqual([]);
  });

  it('prevent: refuses a value that does not conform with 400 and the documented messages', async () => {
    const { outcome, context } = await inbound(policy('prevent', 'ignore'), get('?q=a&limit=99'));
    if (outcome.kind !== 'respond') throw new Error('expected a refusal');
    expect(outcome.response.status).toBe(400);
    expect(context.lastError?.reason).toBe('Bad request');
    expect(context.lastError?.message).toMatch(
      /^Value of the query parameter limit does not conform to the definition\.\n\nThe value must be <= 50\./,
    );
    expect(JSON.parse(outcome.response.body.toString()).message).toMatch(
      /^The value of the query parameter limit does not conform to the definition\./,
    );
    expect(errorsOf(context)).toMatchObject([
      { Name: 'limit', Type: 'QueryParameter', ValidationRule: 'IncorrectMessage', Action: 'prevent' },
    ]);
  });

  it("checks a parameter schema's format keyword", async () => {
    const since = {
      name: 'since',
      required: false,
      type: 'string' as const,
      schema: { type: 'string', format: 'date' },
    };
    const withFormat = { ...definition, queryParameters: [...definition.queryParameters, since] };
    const send = (query: string) =>
      inbound(policy('prevent', 'ignore'), { ...get(query), definition: withFormat });
    expect((await send('?q=a&since=2024-05-01')).outcome.kind).toBe('forward');
    const { context } = await send('?q=a&since=May%201st');
    expect(context.lastError?.message).toMatch(
      /^Value of the query parameter since does not conform to the definition\.\n\nThe value must match format "date"\./,
    );
  });

  it('reports a value that cannot be parsed as the declared type, and multiple values of a scalar', async () => {
    const { context } = await inbound(policy('detect', 'ignore'), get('?q=a&q=b&limit=ten', [], 'x'));
    const errors = errorsOf(context);
    expect(errors.map((e: { Details: string }) => e.Details)).toEqual([
      'Value of the query parameter limit cannot be parsed according to the definition.\n\nInput string was not in a correct format.',
      'Request cannot contain multiple values for the query parameter q.',
      'Value of the path parameter id cannot be parsed according to the definition.\n\nInput string was not in a correct format.',
    ]);
    expect(errors.map((e: { Type: string }) => e.Type)).toEqual([
      'QueryParameter',
      'QueryParameter',
      'PathParameter',
    ]);
  });

  it('reports a required parameter that is missing', async () => {
    const { context } = await inbound(policy('prevent', 'ignore'), get(''));
    expect(context.lastError?.message).toBe(
      'Value of the query parameter q does not conform to the definition.\n\nThe query parameter is required.',
    );
  });

  it('unspecified-parameter-action: refuses a query parameter or header the definition does not declare', async () => {
    const query = await inbound(policy('ignore', 'prevent'), get('?q=a&debug=1'));
    expect(query.context.lastError?.message).toBe('Unspecified query parameter debug is not allowed.');
    expect(errorsOf(query.context)).toMatchObject([{ Name: 'debug', ValidationRule: 'Unspecified' }]);
    const header = await inbound(
      policy('ignore', 'prevent', '<query unspecified-parameter-action="ignore" />'),
      get('?debug=1', [['X-Other', '1']]),
    );
    expect(header.context.lastError?.message).toBe('Unspecified header X-Other is not allowed.');
    // Envoy's own headers are not the client's, so never unspecified.
    const envoy = await inbound(
      policy('ignore', 'prevent'),
      get('?q=a', [
        ['x-request-id', 'r'],
        ['x-forwarded-proto', 'https'],
        ['x-envoy-expected-rq-timeout-ms', '1000'],
      ]),
    );
    expect(envoy.outcome.kind).toBe('forward');
  });

  it('overrides the actions per location and per parameter, the child over the parent', async () => {
    const inner =
      '<headers specified-parameter-action="detect" unspecified-parameter-action="detect"><parameter name="x-trace" action="prevent" /><parameter name="User-Agent" action="ignore" /></headers>' +
      '<query specified-parameter-action="ignore" unspecified-parameter-action="ignore" />' +
      '<path specified-parameter-action="ignore" />';
    const detected = await inbound(
      policy('prevent', 'prevent', inner),
      get(
        '?limit=x',
        [
          ['Accept', '*/*'],
          ['User-Agent', 'c'],
        ],
        'y',
      ),
    );
    expect(detected.outcome.kind).toBe('forward');
    expect(errorsOf(detected.context)).toEqual([
      expect.objectContaining({ Name: 'Accept', Type: 'RequestHeader', Action: 'detect' }),
    ]);
    const prevented = await inbound(policy('prevent', 'prevent', inner), get('', [['X-Trace', 'maybe']]));
    expect(prevented.context.lastError?.message).toMatch(/^Value of the header X-Trace cannot be parsed/);
  });

  it('takes its actions from expressions, refusing a value that is not an action', async () => {
    const ok = await inbound(policy('@("prevent")', '@("ignore")'), get('?q=a&limit=99'));
    expect(ok.context.lastError?.reason).toBe('Bad request');
    const bad = await inbound(policy('@("block")', 'ignore'), get('?q=a'));
    expect(bad.context.lastError?.reason).toBe('ExpressionValueEvaluationFailure');
    expect(bad.context.lastError?.message).toMatch(
      /specified-parameter-action must be one of ignore, prevent, detect, got "block"/,
    );
  });

  it('is refused twice in a section, outside inbound, and with an action that is not one', () => {
    expect(diagnosticsOf(policy('prevent', 'prevent') + policy('prevent', 'prevent'))).toHaveLength(1);
    expect(diagnosticsOf(policy('prevent', 'prevent'), 'outbound')).toEqual([
      expect.stringContaining('not allowed in the outbound section'),
    ]);
    expect(diagnosticsOf(policy('block', 'prevent'))).toEqual([
      expect.stringContaining('specified-parameter-action'),
    ]);
    expect(
      diagnosticsOf(policy('prevent', 'prevent', '<path unspecified-parameter-action="prevent" />')),
    ).toEqual([expect.stringContaining('has no attribute "unspecified-parameter-action"')]);
  });
});
