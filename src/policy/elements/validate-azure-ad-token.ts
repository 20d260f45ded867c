import { decodeJwt } from 'jose';
import { parseJwt } from '../../expr/index.js';
import { defineElement } from '../element.js';
import type { Getter } from '../node.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { elements, GPAO, int, str, text } from '../schema.js';
import {
  type ClaimRule,
  checkAudience,
  checkLifetime,
  checkRequiredClaims,
  DECRYPTION_KEYS,
  decryptionKeys,
  decryptToken,
  extractToken,
  OpenIdConfigs,
  parseClaimsSet,
  REQUIRED_CLAIMS,
  Refusal,
  type TokenSource,
  verifySignature,
} from '../shared/jwt-validation.js';

/** Entra ID's global cloud; sovereign clouds and tests set authentication-endpoint or identities.entraAuthority. */
const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';

/** The tenant as the authority's path wants it: an id or a domain (a URL form gives its host). */
function tenantOf(value: string): string {
  const trimmed = value.trim();
  return /^https?:\/\//i.test(trimmed) ? new URL(trimmed).host : trimmed.replace(/^\/+|\/+$/g, '');
}

/**
 * The OpenID configuration a token is checked against: Entra ID publishes one per token version, v1.0 tokens
 * (`ver` 1.0, issuer https://sts.windows.net/{tenant}/) at the tenant's root and v2.0 tokens under /v2.0.
 */
function configUrl(authority: string, tenant: string, version: string): string {
  const base = `${authority.replace(/\/+$/, '')}/${encodeURIComponent(tenant)}`;
  return version === '1.0'
    ? `${base}/.well-known/openid-configuration`
    : `${base}/v2.0/.well-known/openid-configuration`;
}

/**
 * validate-jwt for tokens Microsoft Entra ID issued: the keys and issuer come from the tenant's OpenID
 * configuration at the authority (default the global cloud; `authentication-endpoint` or the gateway's
 * `identities.entraAuthority` for sovereign clouds and tests), for v1.0 and v2.0 tokens alike; the client
 * application (`appid` / `azp`), the backend application (`aud`), audiences and required claims are checked as
 * API Management does. Refusals carry validate-jwt's reasons and messages.
 */
export const validateAzureAdToken = defineElement({
  name: 'validate-azure-ad-token',
  summary: 'Validates a Microsoft Entra ID token against the tenant’s OpenID configuration.',
  sections: ['inbound'],
  scopes: GPAO,
  attributes: {
    'tenant-id': str({ required: true }),
    'header-name': str(),
    'query-parameter-name': str(),
    'token-value': str(),
    'authentication-endpoint': str(),
    'failed-validation-httpcode': int({ default: 401, min: 100, max: 599 }),
    'failed-validation-error-message': str(),
    'output-token-variable-name': str({ expression: false }),
  },
  content: elements(
    {
      name: 'client-application-ids',
      max: 1,
      content: elements({ name: 'application-id', content: text(true, true) }),
    },
    {
      name: 'backend-application-ids',
      max: 1,
      content: elements({ name: 'application-id', content: text(true, true) }),
    },
    { name: 'audiences', max: 1, content: elements({ name: 'audience', content: text(true, true) }) },
    REQUIRED_CLAIMS,
    DECRYPTION_KEYS,
  ),
  compile(node, c) {
    const named = (['header-name', 'query-parameter-name', 'token-value'] as const).filter((a) =>
      node.has(a),
    );
    if (named.length > 1) {
      c.error(
        node,
        'attribute',
        `validate-azure-ad-token takes at most one of header-name, query-parameter-name and token-value, got ${named.length}`,
      );
    }
    const decryption = decryptionKeys(node.child('decryption-keys'), c, 'validate-azure-ad-token');
    const source: TokenSource = {
      // API Management reads the Authorization header when the policy names no place.
      headerName: node.getter('header-name') ?? (named.length === 0 ? () => 'Authorization' : undefined),
      queryName: node.getter('query-parameter-name'),
      tokenValue: node.getter('token-value'),
      requireScheme: undefined,
    };
    const tenant = node.getter('tenant-id');
    const endpoint = node.getter('authentication-endpoint');
    const status = node.getter('failed-validation-httpcode');
    const errorMessage = node.getter('failed-validation-error-message');
    const outputVariable = node.literal('output-token-variable-name');
    const ids = (list: 'client-application-ids' | 'backend-application-ids') =>
      node
        .child(list)
        ?.childrenNamed('application-id')
        .map((a) => a.text()) ?? [];
    const clientApps = ids('client-application-ids');
    const backendApps = ids('backend-application-ids');
    const audiences =
      node
        .child('audiences')
        ?.childrenNamed('audience')
        .map((a) => a.text()) ?? [];
    // A backend application is the token's audience, as its client id or its App ID URI.
    const allowedAudiences: Getter<string>[] = [
      ...audiences,
      ...backendApps,
      ...backendApps.map((id) => (run: RunContext) => `api://${id(run).trim()}`),
    ];
    const claims: ClaimRule[] = (node.child('required-claims')?.childrenNamed('claim') ?? []).map(
      (claim) => ({
        name: claim.literal('name'),
        match: claim.getter('match'),
        separator: claim.getter('separator'),
        values: claim.childrenNamed('value').map((v) => v.text() ?? (() => '')),
      }),
    );
    const configs = new OpenIdConfigs();

    const verify = async (run: RunContext, token: string): Promise<void> => {
      let version = '2.0';
      try {
        const ver = decodeJwt(token).ver;
        if (ver === '1.0') version = '1.0';
      } catch {
        throw new Refusal('JwtInvalid', 'JWT is not well formed.');
      }
      const authority = endpoint?.(run).trim() || run.services.entraAuthority || DEFAULT_AUTHORITY;
      const url = configUrl(authority, tenantOf(tenant(run)), version);
      const { payload, openIds } = await verifySignature(run, token, {
        requireSigned: () => true,
        secrets: [],
        staticSet: undefined,
        openIdUrls: [() => url],
        configs,
      });
      const claimsSet = parseClaimsSet(payload);
      checkLifetime(
        run,
        claimsSet,
        () => true,
        () => 0,
      );
      // Multi-tenant configurations (common, organizations) write the issuer with a {tenantid} placeholder.
      const issuer = openIds[0]?.issuer?.replace('{tenantid}', String(claimsSet.tid ?? ''));
      if (issuer !== undefined && claimsSet.iss !== issuer)
        throw new Refusal('TokenIssuerNotAllowed', 'JWT issuer is not allowed.');
      checkAudience(run, claimsSet, allowedAudiences);
      if (clientApps.length > 0) {
        const allowed = new Set(clientApps.map((a) => a(run).trim()));
        const app = version === '1.0' ? claimsSet.appid : (claimsSet.azp ?? claimsSet.appid);
        if (typeof app !== 'string' || !allowed.has(app))
          throw new Refusal('TokenClientApplicationNotAllowed', 'JWT client application is not allowed.');
      }
      checkRequiredClaims(run, claimsSet, claims);
    };

    return async (run): Promise<'next'> => {
      try {
        const token = extractToken(run, source);
        if (token === undefined) throw new Refusal('TokenNotPresent', 'JWT not present.');
        const signed = await decryptToken(run, token, decryption);
        await verify(run, signed);
        if (typeof outputVariable === 'string') run.context.variables.set(outputVariable, parseJwt(signed));
        run.services.counters.count('validate-azure-ad-token', 'allowed');
        return 'next';
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        run.services.counters.count('validate-azure-ad-token', 'refused', err.reason);
        const clientMessage =
          errorMessage?.(run) ?? (err.reason === 'TokenNotPresent' ? 'JWT not present.' : 'Invalid JWT.');
        throw new PolicyError(err.reason, err.message, status(run), clientMessage);
      }
    };
  },
});
