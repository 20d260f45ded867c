/**
 * What validate-jwt and validate-azure-ad-token share: reading the token, OpenID configurations and their keys
 * (fetched through the injected fetcher, cached), signature checks with jose, and the claim checks, each refusal with
 * API Management's reason and message.
 */
import {
  type CompactVerifyGetKey,
  compactVerify,
  createLocalJWKSet,
  decodeProtectedHeader,
  type JSONWebKeySet,
} from 'jose';
import type { Getter } from '../node.js';
import type { RunContext } from '../runtime.js';
import { elements, oneOf, str, text } from '../schema.js';

/** `<required-claims>`: each `<claim>` with the values it must have (all of them, or any). */
export const REQUIRED_CLAIMS = {
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
} as const;

/** `<decryption-keys>`: declared so a document that has them is refused by name (encrypted tokens are not supported). */
export const DECRYPTION_KEYS = {
  name: 'decryption-keys',
  max: 1,
  content: elements({
    name: 'key',
    attributes: { 'certificate-id': str({ expression: false }) },
    content: text(false),
  }),
} as const;

/** Algorithms API Management accepts; `none` is handled separately (require-signed-tokens). */
export const ALGORITHMS = [
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
export const CONFIG_TTL_MS = 60 * 60 * 1000;
export const REFRESH_MIN_MS = 5 * 60 * 1000;

export class Refusal {
  constructor(
    readonly reason: string,
    readonly message: string,
  ) {}
}

export interface OpenIdEntry {
  issuer: string | undefined;
  keys: CompactVerifyGetKey;
  fetchedAt: number;
}

/** Fetches and caches openid-config documents and their JWKS through the injected fetcher. */
export class OpenIdConfigs {
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

export async function getJson(run: RunContext, url: string): Promise<unknown> {
  const response = await run.services.fetch({
    method: 'GET',
    url,
    headers: [['Accept', 'application/json']],
    timeoutMs: 10_000,
  });
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`);
  return JSON.parse(response.body.toString('utf8'));
}

/** Tries one key set; undefined when it has no key for this token (so the next set is tried). */
export async function verifyWith(token: string, keys: CompactVerifyGetKey): Promise<Uint8Array | undefined> {
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

export interface ClaimRule {
  readonly name: string;
  readonly match: Getter<string>;
  readonly separator: Getter<string> | undefined;
  readonly values: readonly Getter<string>[];
}

export function claimValues(value: unknown, separator: string | undefined): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list.flatMap((v) => {
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    return separator ? s.split(separator).map((x) => x.trim()) : [s];
  });
}

/** Where the token is read from: exactly one of the three is set (compile refuses anything else). */
export interface TokenSource {
  readonly headerName: Getter<string> | undefined;
  readonly queryName: Getter<string> | undefined;
  readonly tokenValue: Getter<string> | undefined;
  readonly requireScheme: Getter<string> | undefined;
}

/** The token as sent, or undefined when absent; an Authorization header loses its scheme first. */
export function extractToken(run: RunContext, source: TokenSource): string | undefined {
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
export interface SigningKeys {
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
export async function verifySignature(
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

export function parseClaimsSet(payload: Uint8Array): Record<string, unknown> {
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
export function checkLifetime(
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

export function checkAudience(
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
export function checkIssuer(
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

export function checkRequiredClaims(
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

/** Static keys of <issuer-signing-keys>: base64 symmetric secrets or RSA modulus/exponent. */
export interface Secret {
  readonly kid: string | undefined;
  readonly key: Uint8Array;
}

/** jose's JWK sets hold asymmetric keys only; symmetric secrets are tried one by one. */
export const HMAC = ['HS256', 'HS384', 'HS512'];

export async function verifyWithSecrets(
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
