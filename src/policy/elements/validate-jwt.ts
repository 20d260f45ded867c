import {
  type CompactVerifyGetKey,
  compactVerify,
  createLocalJWKSet,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type JWK,
} from 'jose';
import { parseJwt } from '../../expr/index.js';
import { type CompileContext, defineElement } from '../element.js';
import type { Getter, NodeOf } from '../node.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { ALL_SCOPES, bool, type ChildSpec, elements, int, oneOf, str, text } from '../schema.js';

/** Algorithms API Management accepts; `none` is handled separately (require-signed-tokens). */
const ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
];
/** OpenID configurations are re-read hourly, and at most every 5 minutes on an unknown `kid`. */
const CONFIG_TTL_MS = 60 * 60 * 1000;
const REFRESH_MIN_MS = 5 * 60 * 1000;

class Refusal {
  constructor(
    readonly reason: string,
    readonly message: string,
  ) {}
}

interface OpenIdEntry {
  issuer: string | undefined;
  keys: CompactVerifyGetKey;
  fetchedAt: number;
}

/** Fetches and caches openid-config documents and their JWKS through the injected fetcher. */
class OpenIdConfigs {
  readonly #cache = new Map<string, OpenIdEntry>();

  async get(run: RunContext, url: string, forceRefresh: boolean): Promise<OpenIdEntry> {
    const now = run.services.clock.now();
    const cached = this.#cache.get(url);
    if (cached !== undefined) {
      const age = now - cached.fetchedAt;
      if (age < CONFIG_TTL_MS && !(forceRefresh && age >= REFRESH_MIN_MS)) return cached;
    }
    try {
      const config = await getJson(run, url);
      const jwksUri = (config as { jwks_uri?: unknown }).jwks_uri;
      if (typeof jwksUri !== 'string') throw new Error('the OpenID configuration has no jwks_uri');
      const jwks = (await getJson(run, jwksUri)) as JSONWebKeySet;
      if (!Array.isArray(jwks.keys)) throw new Error('the JWKS document has no keys');
      const issuer = (config as { issuer?: unknown }).issuer;
      const entry: OpenIdEntry = {
        issuer: typeof issuer === 'string' ? issuer : undefined,
        keys: createLocalJWKSet(jwks),
        fetchedAt: now,
      };
      this.#cache.set(url, entry);
      return entry;
    } catch (err) {
      run.services.logger.warn('validate-jwt: openid-config unavailable', {
        url,
        error: (err as Error).message,
      });
      if (cached !== undefined) return cached;
      throw new Refusal(
        'TokenSignatureKeyNotFound',
        'JWT signature validation failed: signing keys unavailable.',
      );
    }
  }
}

async function getJson(run: RunContext, url: string): Promise<unknown> {
  const response = await run.services.fetch({
    method: 'GET',
    url,
    headers: [['Accept', 'application/json']],
    timeoutMs: 10_000,
  });
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`);
  return JSON.parse(response.body.toString('utf8'));
}

function base64ToBase64Url(b64: string): string {
  return b64.trim().replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Static keys of <issuer-signing-keys>: base64 symmetric secrets or RSA modulus/exponent. */
interface Secret {
  readonly kid: string | undefined;
  readonly key: Uint8Array;
}

/** jose's JWK sets hold asymmetric keys only; symmetric secrets are tried one by one. */
const HMAC = ['HS256', 'HS384', 'HS512'];

async function verifyWithSecrets(
  token: string,
  kid: string | undefined,
  secrets: readonly Secret[],
): Promise<Uint8Array | undefined> {
  const candidates = secrets.filter((s) => kid === undefined || s.kid === undefined || s.kid === kid);
  for (const secret of candidates) {
    try {
      return (await compactVerify(token, secret.key, { algorithms: HMAC })).payload;
    } catch {
      // try the next key, as API Management does
    }
  }
  if (candidates.length > 0) throw new Refusal('TokenSignatureInvalid', 'JWT signature validation failed.');
  return undefined;
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

/** Tries one key set; undefined when it has no key for this token (so the next set is tried). */
async function verifyWith(token: string, keys: CompactVerifyGetKey): Promise<Uint8Array | undefined> {
  try {
    return (await compactVerify(token, keys, { algorithms: ALGORITHMS })).payload;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_JWKS_NO_MATCHING_KEY') return undefined;
    if (code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS') {
      // jose hands back the candidates: try each (no kid in the token and several keys of the right type).
      for await (const key of err as AsyncIterable<Parameters<typeof compactVerify>[1]>) {
        try {
          return (await compactVerify(token, key as never, { algorithms: ALGORITHMS })).payload;
        } catch {
          // try the next candidate
        }
      }
      throw new Refusal('TokenSignatureInvalid', 'JWT signature validation failed.');
    }
    if (code === 'ERR_JOSE_ALG_NOT_ALLOWED')
      throw new Refusal('TokenSignatureInvalid', 'JWT algorithm is not allowed.');
    throw new Refusal('TokenSignatureInvalid', 'JWT signature validation failed.');
  }
}

interface ClaimRule {
  readonly name: string;
  readonly match: Getter<string>;
  readonly separator: Getter<string> | undefined;
  readonly values: readonly Getter<string>[];
}

function claimValues(value: unknown, separator: string | undefined): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list.flatMap((v) => {
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    return separator ? s.split(separator).map((x) => x.trim()) : [s];
  });
}

/** Where the token is read from: exactly one of the three is set (compile refuses anything else). */
interface TokenSource {
  readonly headerName: Getter<string> | undefined;
  readonly queryName: Getter<string> | undefined;
  readonly tokenValue: Getter<string> | undefined;
  readonly requireScheme: Getter<string> | undefined;
}

/** The token as sent, or undefined when absent; an Authorization header loses its scheme first. */
function extractToken(run: RunContext, source: TokenSource): string | undefined {
  const { headerName, queryName, tokenValue, requireScheme } = source;
  const request = run.context.request;
  if (tokenValue !== undefined) return tokenValue(run).trim() || undefined;
  if (queryName !== undefined) return request.url.query.get(queryName(run))?.[0]?.trim() || undefined;
  const name = headerName!(run);
  const raw = request.headers.getJoined(name)?.trim();
  if (!raw) return undefined;
  if (name.toLowerCase() !== 'authorization') return raw;
  const space = raw.indexOf(' ');
  const scheme = space < 0 ? '' : raw.slice(0, space);
  if (requireScheme !== undefined && scheme.toLowerCase() !== requireScheme(run).toLowerCase()) {
    throw new Refusal(
      'TokenNotPresent',
      `JWT not present: the ${name} header does not use the ${requireScheme(run)} scheme.`,
    );
  }
  return space < 0 ? raw : raw.slice(space + 1).trim() || undefined;
}

/** The keys a signature may be checked against, in the order they are tried. */
interface SigningKeys {
  readonly requireSigned: Getter<boolean>;
  readonly secrets: readonly Secret[];
  readonly staticSet: CompactVerifyGetKey | undefined;
  readonly openIdUrls: readonly Getter<string>[];
  readonly configs: OpenIdConfigs;
}

/**
 * Checks the signature and returns the payload, with the OpenID configurations that apply: their issuers are
 * allowed issuers even when the token was signed by a static key.
 */
async function verifySignature(
  run: RunContext,
  token: string,
  signing: SigningKeys,
): Promise<{ payload: Uint8Array; openIds: OpenIdEntry[] }> {
  const { requireSigned, secrets, staticSet, openIdUrls, configs } = signing;
  let header: { alg?: string; kid?: string };
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new Refusal('JwtInvalid', 'JWT is not well formed.');
  }
  if (token.split('.').length !== 3) throw new Refusal('JwtInvalid', 'JWT is not well formed.');
  let payload: Uint8Array | undefined;
  const openIds: OpenIdEntry[] = [];
  if (header.alg === 'none') {
    if (requireSigned(run)) throw new Refusal('TokenSignatureInvalid', 'JWT is not signed.');
    payload = Buffer.from(token.split('.')[1]!, 'base64url');
  } else {
    if (header.alg !== undefined && HMAC.includes(header.alg)) {
      payload = await verifyWithSecrets(token, header.kid, secrets);
    } else if (staticSet !== undefined) {
      payload = await verifyWith(token, staticSet);
    }
    for (const url of openIdUrls) {
      if (payload !== undefined) break;
      const entry = await configs.get(run, url(run), false);
      openIds.push(entry);
      payload = await verifyWith(token, entry.keys);
      if (payload === undefined) {
        // Unknown kid: the provider may have rotated its keys.
        const fresh = await configs.get(run, url(run), true);
        if (fresh !== entry) {
          openIds[openIds.length - 1] = fresh;
          payload = await verifyWith(token, fresh.keys);
        }
      }
    }
    if (payload === undefined)
      throw new Refusal(
        'TokenSignatureKeyNotFound',
        'JWT signature validation failed: no signing key matches the token.',
      );
  }
  if (openIds.length === 0 && openIdUrls.length > 0 && header.alg !== 'none') {
    for (const url of openIdUrls) openIds.push(await configs.get(run, url(run), false));
  }
  return { payload, openIds };
}

function parseClaimsSet(payload: Uint8Array): Record<string, unknown> {
  let claimsSet: Record<string, unknown>;
  try {
    claimsSet = JSON.parse(Buffer.from(payload).toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new Refusal('JwtInvalid', 'JWT payload is not a JSON object.');
  }
  if (claimsSet === null || typeof claimsSet !== 'object' || Array.isArray(claimsSet)) {
    throw new Refusal('JwtInvalid', 'JWT payload is not a JSON object.');
  }
  return claimsSet;
}

/** exp and nbf, both widened by the allowed clock skew (seconds). */
function checkLifetime(
  run: RunContext,
  claimsSet: Record<string, unknown>,
  requireExp: Getter<boolean>,
  clockSkew: Getter<number>,
): void {
  const now = run.services.clock.now() / 1000;
  const skew = clockSkew(run);
  const exp = claimsSet.exp;
  if (exp === undefined) {
    if (requireExp(run)) throw new Refusal('TokenExpired', 'JWT has no expiration time.');
  } else if (typeof exp !== 'number' || now > exp + skew) {
    throw new Refusal('TokenExpired', 'JWT has expired.');
  }
  const nbf = claimsSet.nbf;
  if (typeof nbf === 'number' && now + skew < nbf) throw new Refusal('JwtInvalid', 'JWT is not valid yet.');
}

function checkAudience(
  run: RunContext,
  claimsSet: Record<string, unknown>,
  audiences: readonly Getter<string>[],
): void {
  if (audiences.length === 0) return;
  const allowed = new Set(audiences.map((a) => a(run).trim()));
  const aud = claimsSet.aud;
  const sent = Array.isArray(aud) ? aud : aud === undefined ? [] : [aud];
  if (!sent.some((a) => typeof a === 'string' && allowed.has(a))) {
    throw new Refusal('TokenAudienceNotAllowed', 'JWT audience is not allowed.');
  }
}

/** Allowed issuers are the listed ones plus those of the OpenID configurations; none listed allows any. */
function checkIssuer(
  run: RunContext,
  claimsSet: Record<string, unknown>,
  issuers: readonly Getter<string>[],
  openIds: readonly OpenIdEntry[],
): void {
  const issuerList = [...issuers.map((i) => i(run).trim()), ...openIds.map((o) => o.issuer)].filter(
    (i): i is string => i !== undefined && i !== '',
  );
  if (issuerList.length > 0 && !issuerList.includes(String(claimsSet.iss))) {
    throw new Refusal('TokenIssuerNotAllowed', 'JWT issuer is not allowed.');
  }
}

function checkRequiredClaims(
  run: RunContext,
  claimsSet: Record<string, unknown>,
  claims: readonly ClaimRule[],
): void {
  for (const rule of claims) {
    if (!(rule.name in claimsSet))
      throw new Refusal('TokenClaimNotFound', `JWT is missing the required claim "${rule.name}".`);
    if (rule.values.length === 0) continue;
    const present = new Set(claimValues(claimsSet[rule.name], rule.separator?.(run)));
    const wanted = rule.values.map((v) => v(run).trim());
    const ok =
      rule.match(run) === 'any' ? wanted.some((w) => present.has(w)) : wanted.every((w) => present.has(w));
    if (!ok)
      throw new Refusal(
        'TokenClaimValueNotAllowed',
        `JWT claim "${rule.name}" has a value that is not allowed.`,
      );
  }
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
    {
      name: 'decryption-keys',
      max: 1,
      content: elements({
        name: 'key',
        attributes: { 'certificate-id': str({ expression: false }) },
        content: text(false),
      }),
    },
    { name: 'audiences', max: 1, content: elements({ name: 'audience', content: text(true, true) }) },
    { name: 'issuers', max: 1, content: elements({ name: 'issuer', content: text(true, true) }) },
    {
      name: 'required-claims',
      max: 1,
      content: elements({
        name: 'claim',
        attributes: {
          name: str({ required: true, expression: false }),
          match: oneOf(['all', 'any'], { default: 'all' }),
          separator: str(),
        },
        content: elements({ name: 'value', content: text(true) }),
      }),
    },
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
    if (node.child('decryption-keys') !== undefined) {
      c.error(
        node,
        'not-supported',
        'validate-jwt/decryption-keys is not supported yet: encrypted tokens are "not implemented yet"',
      );
    }
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
        await verify(run, token);
        if (typeof outputVariable === 'string') run.context.variables.set(outputVariable, parseJwt(token));
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
