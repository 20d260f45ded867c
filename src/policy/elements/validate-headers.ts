import { defineElement } from '../element.js';
import { responseOf } from '../message.js';
import { ALL_SCOPES, elements, str } from '../schema.js';
import { declaredResponse } from '../shared/mock-content.js';
import type { DefinedResponse } from '../shared/operation-definition.js';
import { checkParameter } from '../shared/parameter-check.js';
import {
  action,
  actionGetter,
  apiSchemaError,
  INTERNAL_ERROR,
  settle,
  type ValidationError,
} from '../shared/validation.js';

/**
 * Response headers the transport writes, not the API: OpenAPI says a definition's Content-Type response header is
 * ignored, and the others are the HTTP layer's (Envoy's, on the way back), so none of them is "unspecified".
 */
const TRANSPORT_HEADERS =
  /^(?:content-type|content-length|transfer-encoding|connection|date|server|keep-alive|x-envoy-.*)$/i;

/**
 * Validates the response headers against the headers the operation's definition declares for the response's status
 * (learn.microsoft.com/azure/api-management/validate-headers-policy).
 */
export const validateHeaders = defineElement({
  name: 'validate-headers',
  summary: "Validates the response headers against the operation's definition of the response.",
  sections: ['outbound', 'on-error'],
  scopes: ALL_SCOPES,
  oncePerSection: true,
  attributes: {
    'specified-header-action': action({ required: true }),
    'unspecified-header-action': action({ required: true }),
    'errors-variable-name': str({ expression: false }),
  },
  content: elements({
    name: 'header',
    attributes: { name: str({ required: true, expression: false }), action: action({ required: true }) },
  }),
  compile(node, c) {
    const specified = actionGetter(
      node.getter('specified-header-action'),
      'validate-headers/@specified-header-action',
    );
    const unspecified = actionGetter(
      node.getter('unspecified-header-action'),
      'validate-headers/@unspecified-header-action',
    );
    const errorsVariable = node.literal('errors-variable-name');
    const overrides = node.childrenNamed('header').map((header) => ({
      name: header.literal('name').toLowerCase(),
      action: actionGetter(header.getter('action'), 'validate-headers/header/@action'),
    }));
    return (run) => {
      const response = responseOf(run, c.target);
      const definition = run.operationDefinition;
      const errors: ValidationError[] = [];
      if (definition === undefined) errors.push(apiSchemaError(unspecified(run)));
      else {
        const defined: DefinedResponse | undefined = declaredResponse(
          definition.responses,
          response.statusCode,
        );
        const declared = defined?.headers ?? [];
        const override = (name: string) => overrides.find((o) => o.name === name.toLowerCase())?.action(run);
        for (const header of declared) {
          const chosen = override(header.name) ?? specified(run);
          if (chosen === 'ignore') continue;
          const problem = checkParameter(header, response.headers.get(header.name), 'header', 'Response');
          if (problem !== undefined)
            errors.push({
              name: header.name,
              type: 'ResponseHeader',
              rule: problem.rule,
              details: problem.details,
              publicResponse: INTERNAL_ERROR,
              action: chosen,
            });
        }
        for (const name of response.headers.names()) {
          if (TRANSPORT_HEADERS.test(name)) continue;
          if (declared.some((header) => header.name.toLowerCase() === name.toLowerCase())) continue;
          const chosen = override(name) ?? unspecified(run);
          if (chosen === 'ignore') continue;
          errors.push({
            name,
            type: 'ResponseHeader',
            rule: 'Unspecified',
            details: `Unspecified header ${name} is not allowed.`,
            publicResponse: INTERNAL_ERROR,
            action: chosen,
          });
        }
      }
      settle(run, 'validate-headers', false, errorsVariable, errors);
      return 'next';
    };
  },
});
