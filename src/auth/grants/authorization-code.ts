import { digest } from '../crypto.js';
import { OAuthError } from '../errors.js';
import { PKCE_VALUE, pkceMatches } from '../pkce.js';
import { issueTokens, revokeGrant } from '../server-context.js';
import { canonicalResource } from '../tokens.js';
import type { GrantHandler } from './types.js';

/**
 * authorization_code (OAuth 2.1 §4.1.3). Checks run before the code is consumed, so an attempt with a wrong
 * verifier, client or redirect_uri neither burns the code nor revokes anything (OAuth 2.1 §4.1.3: a replay
 * that fails other checks must not be a denial-of-service lever). A second *valid* redemption revokes every
 * token issued from the code.
 */
export const authorizationCode: GrantHandler = {
  name: 'authorization_code',
  parameters: ['code', 'code_verifier', 'redirect_uri', 'resource'],
  async handle({ form, client, server, address }) {
    const code = form.get('code');
    if (code === undefined) throw new OAuthError('invalid_request', 'code is required');
    const verifier = form.get('code_verifier');
    if (verifier === undefined) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
    if (!PKCE_VALUE.test(verifier)) {
      throw new OAuthError(
        'invalid_request',
        'code_verifier must be 43-128 characters of A-Z a-z 0-9 - . _ ~',
      );
    }

    const record = await server.stores.codes.find(digest(code));
    if (!record || record.expiresAt <= server.options.clock()) {
      throw new OAuthError('invalid_grant', 'the authorization code is invalid or expired');
    }
    if (record.clientId !== client.clientId) {
      throw new OAuthError('invalid_grant', 'the authorization code was issued to another client');
    }
    if (!pkceMatches(record.codeChallengeMethod, record.codeChallenge, verifier)) {
      throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
    }
    const redirectUri = form.get('redirect_uri');
    if (redirectUri !== undefined && redirectUri !== record.redirectUri) {
      throw new OAuthError('invalid_grant', 'redirect_uri differs from the one of the authorization request');
    }
    const resource = form.get('resource');
    if (resource !== undefined && canonicalResource(resource) !== canonicalResource(record.resource)) {
      throw new OAuthError('invalid_target', 'resource differs from the one of the authorization request');
    }

    if (record.consumed || !(await server.stores.codes.consume(record.id))) {
      await revokeGrant(server, record.grantId);
      server.options.securityEvent('authorization_code.replayed', {
        address,
        client_id: client.clientId,
        username: record.sub,
      });
      throw new OAuthError('invalid_grant', 'the authorization code has already been used');
    }
    const grant = await server.stores.grants.get(record.grantId);
    if (!grant || grant.revoked) throw new OAuthError('invalid_grant', 'the grant has been revoked');
    return issueTokens(server, { grant, client, scope: record.scope, authTime: record.authTime });
  },
};
