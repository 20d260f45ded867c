import { defineElement } from '../element.js';
import { bool, EMPTY, GPAO, str } from '../schema.js';
import { identityToken } from '../shared/managed-identity.js';

/**
 * Authenticates to the backend with a token of the gateway's own identity for `resource`: `Authorization: Bearer`
 * (or the variable named by output-token-variable-name). Where the token comes from is the deployment's choice
 * (the `identities` section: Portcullis's own authorization server, any OAuth client credentials, Azure managed
 * identity, a federated workload token); `client-id` selects the source whose name or clientId it is, and an
 * azure-imds default acts as that user-assigned identity. The engine caches tokens until shortly before expiry.
 */
export const authenticationManagedIdentity = defineElement({
  name: 'authentication-managed-identity',
  summary:
    "Authenticates to the backend with a token of the gateway's own identity (the identities section).",
  sections: ['inbound'],
  scopes: GPAO,
  attributes: {
    resource: str({ required: true }),
    'client-id': str({ expression: false }),
    'output-token-variable-name': str({ expression: false }),
    'ignore-error': bool({ default: false }),
  },
  content: EMPTY,
  compile(node) {
    const resource = node.getter('resource');
    const clientId = node.literal('client-id');
    const outputVariable = node.literal('output-token-variable-name');
    const ignoreError = node.getter('ignore-error');
    return async (run): Promise<'next'> => {
      const token = await identityToken(run, {
        element: 'authentication-managed-identity',
        resource: resource(run).trim(),
        clientId: typeof clientId === 'string' ? clientId : undefined,
        ignoreError: ignoreError(run),
      });
      if (token === undefined) return 'next';
      if (typeof outputVariable === 'string') run.context.variables.set(outputVariable, token);
      else run.context.request.headers.set('Authorization', `Bearer ${token}`);
      return 'next';
    };
  },
});
