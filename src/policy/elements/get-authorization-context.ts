import { AuthorizationContext, parseJwt } from '../../expr/index.js';
import { defineElement } from '../element.js';
import { PolicyError } from '../runtime.js';
import { bool, EMPTY, GPAO, oneOf, str } from '../schema.js';

/**
 * Puts a credential manager connection's token into a context variable as an `Authorization` (AccessToken, Claims),
 * for expressions such as `((Authorization)context.Variables["auth"]).AccessToken`. Providers and connections are
 * the gateway's (identities.credentialProviders); identity-type="jwt" names the user the connection acts for by the
 * `identity` token's subject.
 */
export const getAuthorizationContext = defineElement({
  name: 'get-authorization-context',
  summary: 'Gets a credential manager connection’s access token into a context variable (Authorization).',
  sections: ['inbound'],
  scopes: GPAO,
  attributes: {
    'provider-id': str({ required: true }),
    'authorization-id': str({ required: true }),
    'context-variable-name': str({ required: true, expression: false }),
    'identity-type': oneOf(['managed', 'jwt'], { default: 'managed' }),
    identity: str(),
    'ignore-error': bool({ default: false }),
  },
  content: EMPTY,
  compile(node, c) {
    if (node.literal('identity-type') === 'jwt' && !node.has('identity'))
      c.error(
        node,
        'attribute',
        'get-authorization-context with identity-type="jwt" needs identity (the user’s token)',
      );
    const providerId = node.getter('provider-id');
    const authorizationId = node.getter('authorization-id');
    const variable = node.literal('context-variable-name');
    const identityType = node.getter('identity-type');
    const identity = node.getter('identity');
    const ignoreError = node.getter('ignore-error');
    return async (run): Promise<'next'> => {
      const provider = providerId(run).trim();
      const connection = authorizationId(run).trim();
      try {
        const manager = run.services.authorizations;
        if (manager === undefined)
          throw new Error('no credential provider is configured (identities.credentialProviders)');
        let user: string | undefined;
        if (identityType(run) === 'jwt') {
          const presented = parseJwt(identity?.(run) ?? '');
          user = presented?.claim('oid') ?? presented?.claim('sub') ?? undefined;
          if (user === undefined) throw new Error('identity is not a JWT with a subject');
        }
        const found = await manager.authorization({
          providerId: provider,
          authorizationId: connection,
          ...(user === undefined ? {} : { user }),
        });
        run.secrets.add(found.accessToken);
        run.context.variables.set(
          String(variable),
          new AuthorizationContext(found.accessToken, found.claims),
        );
        run.services.counters.count('get-authorization-context', 'allowed');
        return 'next';
      } catch (error) {
        run.services.counters.count('get-authorization-context', 'failed', 'AuthorizationNotAvailable');
        run.services.logger.warn('get-authorization-context: no token', {
          requestId: run.context.requestId.value,
          provider,
          connection,
          error: (error as Error).message,
        });
        if (ignoreError(run)) {
          run.context.variables.set(String(variable), null);
          return 'next';
        }
        throw new PolicyError(
          'AuthorizationNotAvailable',
          `Authorization "${connection}" of provider "${provider}" is not available: ${(error as Error).message}`,
          500,
          'Internal server error',
        );
      }
    };
  },
});
