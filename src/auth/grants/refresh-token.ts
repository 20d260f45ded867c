import { digest } from '../crypto.js';
import { OAuthError } from '../errors.js';
import { issueTokens, revokeGrant } from '../server-context.js';
import { canonicalResource } from '../tokens.js';
import type { GrantHandler } from './types.js';

/**
 * refresh_token (OAuth 2.1 §4.3) with rotation for every client: each refresh token works once, and
 * presenting a used one again is treated as theft — the whole family (grant) is revoked, access tokens
 * included (RFC 9700 §4.14.2). `scope` may only narrow the access token; the new refresh token keeps the
 * grant's scope.
 */
export const refreshToken: GrantHandler = {
  name: 'refresh_token',
  parameters: ['refresh_token', 'scope', 'resource'],
  async handle({ form, client, server, address }) {
    const presented = form.get('refresh_token');
    if (presented === undefined) throw new OAuthError('invalid_request', 'refresh_token is required');

    const record = await server.stores.refreshTokens.find(digest(presented));
    if (!record || record.expiresAt <= server.options.clock()) {
      throw new OAuthError('invalid_grant', 'the refresh token is invalid or expired');
    }
    if (record.clientId !== client.clientId) {
      throw new OAuthError('invalid_grant', 'the refresh token was issued to another client');
    }
    if (record.consumed) {
      await revokeGrant(server, record.grantId);
      server.options.securityEvent('refresh_token.reused', {
        address,
        client_id: client.clientId,
        username: record.sub,
      });
      throw new OAuthError('invalid_grant', 'the refresh token has already been used; the grant is revoked');
    }
    const grant = await server.stores.grants.get(record.grantId);
    if (!grant || grant.revoked) throw new OAuthError('invalid_grant', 'the grant has been revoked');

    let scope = record.scope;
    const requested = form.get('scope');
    if (requested !== undefined) {
      const asked = [...new Set(requested.split(' ').filter((s) => s !== ''))];
      const beyond = asked.filter((s) => !record.scope.includes(s));
      if (beyond.length > 0)
        throw new OAuthError('invalid_scope', `scope exceeds the grant: ${beyond.join(' ')}`);
      scope = asked;
    }
    const resource = form.get('resource');
    if (resource !== undefined && canonicalResource(resource) !== canonicalResource(record.resource)) {
      throw new OAuthError('invalid_target', 'resource differs from the one of the grant');
    }

    if (!(await server.stores.refreshTokens.consume(record.id))) {
      await revokeGrant(server, record.grantId);
      server.options.securityEvent('refresh_token.reused', {
        address,
        client_id: client.clientId,
        username: record.sub,
        reason: 'concurrent',
      });
      throw new OAuthError('invalid_grant', 'the refresh token has already been used; the grant is revoked');
    }
    return issueTokens(server, { grant, client, scope });
  },
};
