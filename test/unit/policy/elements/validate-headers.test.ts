import { describe, expect, it } from 'vitest';
import type { JToken } from '../../../../src/expr/index.js';
import { writeJson } from '../../../../src/expr/library/json/write.js';
import type { OperationDefinition } from '../../../../src/policy/shared/operation-definition.js';
import { outbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

// learn.microsoft.com/azure/api-management/validate-headers-policy; errors: the "Validation errors" table
// (includes/api-management-validation-policy-error-reference.md).

const INTERNAL = 'The request could not be processed due to an internal error. Contact the API owner.';

const definition: OperationDefinition = {
  templateParameters: [],
  queryParameters: [],
  headerParameters: [],
  responses: [
    {
      status: '200',
      headers: [
        { name: 'X-Rate', required: true, type: 'integer' },
        { name: 'ETag', required: false, type: 'string' },
      ],
    },
  ],
};

const errorsOf = (context: { variables: { get(name: string): unknown } }) =>
  JSON.parse(writeJson(null, context.variables.get('errs') as JToken, false));

const policy = (specified: string, unspecified: string, inner = '') =>
  `<validate-headers specified-header-action="${specified}" unspecified-header-action="${unspecified}" errors-variable-name="errs">${inner}</validate-headers>`;

const answer = (headers: [string, string][]) => ({ status: 200, headers, body: '' });

describe('validate-headers', () => {
  it('lets declared headers with conforming values through (transport headers are never unspecified)', async () => {
    const { response, context } = await outbound(
      policy('prevent', 'prevent'),
      answer([
        ['X-Rate', '5'],
        ['Content-Type', 'text/plain'],
        ['Date', 'Tue, 01 Dec 2026 10:00:00 GMT'],
      ]),
      { definition },
    );
    expect(response.status).toBe(200);
    expect(errorsOf(context)).toEqual([]);
  });

  it('prevent: a value that does not conform is a 502 "Response not allowed" with the internal-error body', async () => {
    const { response, context } = await outbound(policy('prevent', 'ignore'), answer([['X-Rate', 'many']]), {
      definition,
    });
    expect(response.status).toBe(502);
    expect(context.lastError?.reason).toBe('Response not allowed');
    expect(context.lastError?.message).toBe(
      'Value of the header X-Rate cannot be parsed according to the definition.\n\nInput string was not in a correct format.',
    );
    expect(JSON.parse(response.body.toString()).message).toBe(INTERNAL);
    expect(errorsOf(context)).toMatchObject([
      { Name: 'X-Rate', Type: 'ResponseHeader', ValidationRule: 'IncorrectMessage' },
    ]);
  });

  it('unspecified-header-action and per-header overrides', async () => {
    const unspecified = await outbound(policy('ignore', 'prevent'), answer([['X-Debug', '1']]), {
      definition,
    });
    expect(unspecified.context.lastError?.message).toBe('Unspecified header X-Debug is not allowed.');
    const overridden = await outbound(
      policy('ignore', 'prevent', '<header name="x-debug" action="detect" />'),
      answer([['X-Debug', '1']]),
      { definition },
    );
    expect(overridden.response.status).toBe(200);
    expect(errorsOf(overridden.context)).toMatchObject([
      { Name: 'X-Debug', ValidationRule: 'Unspecified', Action: 'detect' },
    ]);
    const missing = await outbound(policy('detect', 'ignore'), answer([]), { definition });
    expect(errorsOf(missing.context)).toMatchObject([{ Name: 'X-Rate', Action: 'detect' }]);
  });

  it('is refused in inbound', () => {
    expect(diagnosticsOf(policy('prevent', 'prevent'))).toEqual([
      expect.stringContaining('not allowed in the inbound section'),
    ]);
  });
});
