import { defineElement } from '../element.js';
import { responseOf } from '../message.js';
import { elements, GPAO, int, str } from '../schema.js';
import { declaredResponse } from '../shared/mock-content.js';
import { action, actionGetter, apiSchemaError, INTERNAL_ERROR, settle } from '../shared/validation.js';

/**
 * Validates the response's status code against the responses the operation's definition declares: an exact code, its
 * class (`4XX`) or `default` (learn.microsoft.com/azure/api-management/validate-status-code-policy). A `status-code`
 * override applies only to a code the definition does not declare.
 */
export const validateStatusCode = defineElement({
  name: 'validate-status-code',
  summary: "Validates the response's status code against the operation's definition.",
  sections: ['outbound', 'on-error'],
  scopes: GPAO,
  attributes: {
    'unspecified-status-code-action': action({ required: true }),
    'errors-variable-name': str({ expression: false }),
  },
  content: elements({
    name: 'status-code',
    attributes: { code: int({ required: true, min: 100, max: 599 }), action: action({ required: true }) },
  }),
  compile(node, c) {
    const unspecified = actionGetter(
      node.getter('unspecified-status-code-action'),
      'validate-status-code/@unspecified-status-code-action',
    );
    const errorsVariable = node.literal('errors-variable-name');
    const overrides = node.childrenNamed('status-code').map((override) => ({
      code: override.getter('code'),
      action: actionGetter(override.getter('action'), 'validate-status-code/status-code/@action'),
    }));
    return (run) => {
      const status = responseOf(run, c.target).statusCode;
      const definition = run.operationDefinition;
      if (definition === undefined) {
        settle(run, 'validate-status-code', false, errorsVariable, [apiSchemaError(unspecified(run))]);
        return 'next';
      }
      if (declaredResponse(definition.responses, status) !== undefined) {
        settle(run, 'validate-status-code', false, errorsVariable, []);
        return 'next';
      }
      const chosen = overrides.find((o) => o.code(run) === status)?.action(run) ?? unspecified(run);
      settle(run, 'validate-status-code', false, errorsVariable, [
        {
          name: String(status),
          type: 'StatusCode',
          rule: 'Unspecified',
          details: `Response status code ${status} is not allowed.`,
          publicResponse: INTERNAL_ERROR,
          action: chosen,
        },
      ]);
      return 'next';
    };
  },
});
