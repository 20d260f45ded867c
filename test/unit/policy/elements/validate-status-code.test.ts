import { describe, expect, it } from 'vitest';
import type { JToken } from '../../../../src/expr/index.js';
import { writeJson } from '../../../../src/expr/library/json/write.js';
import type { OperationDefinition } from '../../../../src/policy/shared/operation-definition.js';
import { outbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

// learn.microsoft.com/azure/api-management/validate-status-code-policy; errors: the "Validation errors" table.

const definition: OperationDefinition = {
  templateParameters: [],
  queryParameters: [],
  headerParameters: [],
  responses: [{ status: '200' }, { status: '4XX' }],
};

const errorsOf = (context: { variables: { get(name: string): unknown } }) =>
  JSON.parse(writeJson(null, context.variables.get('errs') as JToken, false));

const policy = (unspecified: string, inner = '') =>
  `<validate-status-code unspecified-status-code-action="${unspecified}" errors-variable-name="errs">${inner}</validate-status-code>`;

describe('validate-status-code', () => {
  it('lets a declared code through, exact or by its class', async () => {
    for (const status of [200, 404]) {
      const { response, context } = await outbound(policy('prevent'), { status }, { definition });
      expect(response.status).toBe(status);
      expect(errorsOf(context)).toEqual([]);
    }
  });

  it('prevent: hides an undeclared code behind 502 "Response not allowed"', async () => {
    const { response, context } = await outbound(
      policy('prevent'),
      { status: 500, body: 'stack trace' },
      { definition },
    );
    expect(response.status).toBe(502);
    expect(context.lastError?.reason).toBe('Response not allowed');
    expect(context.lastError?.message).toBe('Response status code 500 is not allowed.');
    expect(response.body.toString()).not.toContain('stack trace');
    expect(errorsOf(context)).toEqual([
      {
        Name: '500',
        Type: 'StatusCode',
        ValidationRule: 'Unspecified',
        Details: 'Response status code 500 is not allowed.',
        Action: 'prevent',
      },
    ]);
  });

  it('a status-code override applies to an undeclared code only', async () => {
    const overridden = await outbound(
      policy('prevent', '<status-code code="500" action="detect" />'),
      { status: 500 },
      { definition },
    );
    expect(overridden.response.status).toBe(500);
    expect(errorsOf(overridden.context)).toMatchObject([{ Action: 'detect' }]);
    const declared = await outbound(
      policy('ignore', '<status-code code="200" action="prevent" />'),
      { status: 200 },
      { definition },
    );
    expect(declared.response.status).toBe(200);
  });

  it('is refused in inbound and without its action', () => {
    expect(diagnosticsOf(policy('prevent'))).toEqual([
      expect.stringContaining('not allowed in the inbound section'),
    ]);
    expect(diagnosticsOf('<validate-status-code />', 'outbound')).toEqual([
      expect.stringContaining('unspecified-status-code-action is required'),
    ]);
  });
});
