import { createLocalJWKSet, type JWK } from 'jose';
import { parseJwt } from '../../expr/index.js';
import { type CompileContext, defineElement } from '../element.js';
import type { NodeOf } from '../node.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { ALL_SCOPES, bool, type ChildSpec, elements, int, str, text } from '../schema.js';
import {
  type ClaimRule,
  checkAudience,
  checkIssuer,
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
  type Secret,
  type SigningKeys,
  type TokenSource,
  verifySignature,
} from '../shared/jwt-validation.js';

function base64ToBase64Url(b64: string): string {
  return b64.trim().replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Declared apart from the element so that staticKeys takes this child typed by it. */
const ISSUER_SIGNING_KEYS = {
  name: 'issuer-signing-keys',
  max: 1,
  content: elements({
    name: 'key',
    attributes: {
      id: str({ expression: false }),
      'certificate-id': str({ expression: false }),
      n: str({ expression: false }),
      e: str({ expression: false }),
    },
    content: text(false),
  }),
} as const satisfies ChildSpec;

function staticKeys(
  node: NodeOf<typeof ISSUER_SIGNING_KEYS> | undefined,
  c: CompileContext,
): { keys: JWK[]; secrets: Secret[] } {
  const keys: JWK[] = [];
  const secrets: Secret[] = [];
  for (const key of node?.childrenNamed('key') ?? []) {
    const kid = key.literal('id');
    const n = key.literal('n');
    const e = key.literal('e');
    if (key.has('certificate-id')) {
      c.error(
        key,
        'not-supported',
        'issuer-signing-keys/key/@certificate-id is not supported: needs the API Management certificate store',
      );
      continue;
    }
    const base: JWK = typeof kid === 'string' ? { kid } : {};
    if (typeof n === 'string' && typeof e === 'string') {
      keys.push({ ...base, kty: 'RSA', n: base64ToBase64Url(n), e: base64ToBase64Url(e) });
      continue;
    }
    const secret = key.content?.kind === 'literal' ? String(key.content.value).trim() : '';
    if (secret === '' || !/^[A-Za-z0-9+/=_-]+$/.test(secret)) {
      c.error(
        key,
        'children',
        `issuer-signing-keys/key must hold a base64 key or have n and e, got "${secret.slice(0, 20)}"`,
      );
      continue;
    }
    secrets.push({ kid: typeof kid === 'string' ? kid : undefined, key: Buffer.from(secret, 'base64') });
  }
  return { keys, secrets };
}

/** Validates a JWT (signature, lifetime, audience, issuer, required claims) with jose. */
export const validateJwt = defineElement({
  name: 'validate-jwt',
  summary: 'Validates a JSON Web Token from a header, query parameter or expression.',
  sections: ['inbound'],
  scopes: ALL_SCOPES,
  attributes: {
    'header-name': str(),
    'query-parameter-name': str(),
    'token-value': str(),
    'failed-validation-httpcode': int({ default: 401, min: 100, max: 599 }),
    'failed-validation-error-message': str(),
    'require-expiration-time': bool({ default: true }),
    'require-scheme': str(),
    'require-signed-tokens': bool({ default: true }),
    'clock-skew': int({ default: 0, min: 0 }),
    'output-token-variable-name': str({ expression: false }),
  },
  content: elements(
    { name: 'openid-config', attributes: { url: str({ required: true }), 'validate-connectivity': bool() } },
    ISSUER_SIGNING_KEYS,
    DECRYPTION_KEYS,
    { name: 'audiences', max: 1, content: elements({ name: 'audience', content: text(true, true) }) },
    { name: 'issuers', max: 1, content: elements({ name: 'issuer', content: text(true, true) }) },
    REQUIRED_CLAIMS,
  ),
  compile(node, c) {
    const sources = (['header-name', 'query-parameter-name', 'token-value'] as const).filter((a) =>
      node.has(a),
    );
    if (sources.length !== 1) {
      c.error(
        node,
        'attribute',
        `validate-jwt needs exactly one of header-name, query-parameter-name and token-value, got ${sources.length}`,
      );
    }
    const decryption = decryptionKeys(node.child('decryption-keys'), c, 'validate-jwt');
    const source: TokenSource = {
      headerName: node.getter('header-name'),
      queryName: node.getter('query-parameter-name'),
      tokenValue: node.getter('token-value'),
      requireScheme: node.getter('require-scheme'),
    };
    const status = node.getter('failed-validation-httpcode');
    const errorMessage = node.getter('failed-validation-error-message');
    const requireExp = node.getter('require-expiration-time');
    const clockSkew = node.getter('clock-skew');
    const outputVariable = node.literal('output-token-variable-name');
    const { keys, secrets } = staticKeys(node.child('issuer-signing-keys'), c);
    const signing: SigningKeys = {
      requireSigned: node.getter('require-signed-tokens'),
      secrets,
      staticSet: keys.length > 0 ? createLocalJWKSet({ keys }) : undefined,
      openIdUrls: node.childrenNamed('openid-config').map((o) => o.getter('url')),
      configs: new OpenIdConfigs(),
    };
    const audiences =
      node
        .child('audiences')
        ?.childrenNamed('audience')
        .map((a) => a.text()) ?? [];
    const issuers =
      node
        .child('issuers')
        ?.childrenNamed('issuer')
        .map((i) => i.text()) ?? [];
    const claims: ClaimRule[] = (node.child('required-claims')?.childrenNamed('claim') ?? []).map(
      (claim) => ({
        name: claim.literal('name'),
        match: claim.getter('match'),
        separator: claim.getter('separator'),
        values: claim.childrenNamed('value').map((v) => v.text() ?? (() => '')),
      }),
    );

    const verify = async (run: RunContext, token: string): Promise<Record<string, unknown>> => {
      const { payload, openIds } = await verifySignature(run, token, signing);
      const claimsSet = parseClaimsSet(payload);
      checkLifetime(run, claimsSet, requireExp, clockSkew);
      checkAudience(run, claimsSet, audiences);
      checkIssuer(run, claimsSet, issuers, openIds);
      checkRequiredClaims(run, claimsSet, claims);
      return claimsSet;
    };

    return async (run): Promise<'next'> => {
      try {
        const token = extractToken(run, source);
        if (token === undefined) throw new Refusal('TokenNotPresent', 'JWT not present.');
        const signed = await decryptToken(run, token, decryption);
        await verify(run, signed);
        if (typeof outputVariable === 'string') run.context.variables.set(outputVariable, parseJwt(signed));
        return 'next';
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        const code = status(run);
        const clientMessage =
          errorMessage?.(run) ?? (err.reason === 'TokenNotPresent' ? 'JWT not present.' : 'Invalid JWT.');
        throw new PolicyError(err.reason, err.message, code, clientMessage);
      }
    };
  },
});
