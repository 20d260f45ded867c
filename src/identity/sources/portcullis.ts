import { randomBytes } from 'node:crypto';
import { importJWK, type JWTPayload, SignJWT } from 'jose';
import { IdentityError } from '../errors.js';
import type { IdentitySourceConfig } from '../options.js';
import type { TokenSource } from '../token-source.js';
import type { SourceContext } from './context.js';

type Config = Extract<IdentitySourceConfig, { type: 'portcullis' }>;

/**
 * Portcullis's own authorization server as the identity: an RFC 9068 access token for the gateway itself
 * (`sub`/`client_id` the gateway, `aud` the policy's resource), signed with the AS's current key, so a backend
 * validates it with the issuer's JWKS exactly like the tokens of MCP tool calls. The keys are read for each token:
 * when the AS rotates them, the next token uses the new current key.
 */
export function portcullisSource(config: Config, context: SourceContext): TokenSource {
  return {
    actsForAnyClientId: false,
    async fetch({ resource }) {
      const server = context.authorizationServer;
      if (server === undefined)
        throw new IdentityError(
          'unavailable',
          `identity "${context.name}": the portcullis source needs the auth section`,
        );
      const keys = await server.signingKeys();
      const jwk = keys[0];
      if (jwk === undefined || typeof jwk.kid !== 'string' || typeof jwk.alg !== 'string')
        throw new IdentityError(
          'unavailable',
          `identity "${context.name}": the authorization server has no signing key yet`,
        );
      const iat = Math.floor(context.now() / 1000);
      const exp = iat + config.ttlSeconds;
      const claims = {
        iss: server.issuer,
        sub: config.subject,
        aud: resource,
        exp,
        iat,
        jti: randomBytes(18).toString('base64url'),
        client_id: config.subject,
        scope: '',
      };
      const key = await importJWK(jwk, jwk.alg);
      const token = await new SignJWT(claims as JWTPayload)
        .setProtectedHeader({ alg: jwk.alg, kid: jwk.kid, typ: 'at+jwt' })
        .sign(key);
      return { token, expiresAt: exp * 1000 };
    },
  };
}
