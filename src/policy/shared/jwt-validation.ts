/**
 * What validate-jwt and validate-azure-ad-token share: reading the token, OpenID configurations and their keys
 * (fetched through the injected fetcher, cached), signature checks with jose, and the claim checks, each refusal with
 * API Management's reason and message.
 */
import type { KeyObject } from 'node:crypto';
import {
  type CompactVerifyGetKey,
  compactDecrypt,
  compactVerify,
  createLocalJWKSet,
  decodeProtectedHeader,
  type JSONWebKeySet,
} from 'jose';
import type { CompileContext } from '../element.js';
import type { Getter, NodeOf } from '../node.js';
import type { RunContext } from '../runtime.js';
import { elements, oneOf, str, text } from '../schema.js';
import { allowedMs } from './work-budget.js';

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

/**
 * `<decryption-keys>`: the keys an encrypted token (JWE) is opened with, tried in order — a base64 symmetric key
 * (the text, literal or an expression) or the private key of a certificate of the gateway's store (`certificate-id`,
 * RSA-OAEP); `id` matches the JWE's `kid`.
 */
export const DECRYPTION_KEYS = {
  name: 'decryption-keys',
  max: 1,
  content: elements({
    name: 'key',
    attributes: { id: str({ expression: false }), 'certificate-id': str({ expression: false }) },
    content: text(true),
  }),
} as const;

/** One compiled `<decryption-keys>/<key>`. */
export interface DecryptionKey {
  readonly kid: string | undefined;
  /** Throws (a 500, not a refusal) when the key cannot be had: an unknown certificate, an expression that fails. */
  readonly key: (run: RunContext) => Uint8Array | KeyObject;
}

const BASE64 = /^[A-Za-z0-9+/=_-]+$/;

/** Compiles `<decryption-keys>` once: literal keys are decoded here, expressions and certificates per request. */
export function decryptionKeys(
  node: NodeOf<typeof DECRYPTION_KEYS> | undefined,
  c: CompileContext,
  element: string,
): DecryptionKey[] {
  const keys: DecryptionKey[] = [];
  for (const key of node?.childrenNamed('key') ?? []) {
    const kid = key.literal('id');
    const base = { kid: typeof kid === 'string' ? kid : undefined };
    const certificateId = key.literal('certificate-id');
    if (typeof certificateId === 'string') {
      if (key.content !== undefined) {
        c.error(
          key,
          'children',
          `${element}/decryption-keys/key takes either certificate-id or a base64 key as its text, got both`,
        );
        continue;
      }
      if (c.certificateIds !== undefined && !c.certificateIds.has(certificateId)) {
        c.error(
          key,
          'attribute',
          `${element}/decryption-keys/key/@certificate-id must name a certificate of tls.certificates, got "${certificateId}" (known: ${[...c.certificateIds].join(', ') || 'none'})`,
        );
        continue;
      }
      c.usesCertificate(certificateId);
      keys.push({
        ...base,
        key: (run) => {
          const privateKey = run.services.certificateKeys?.privateKey(certificateId);
          if (privateKey === undefined)
            throw new Error(`decryption key certificate "${certificateId}" is not in tls.certificates`);
          return privateKey;
        },
      });
      continue;
    }
    const content = key.content;
    if (content === undefined) {
      c.error(
        key,
        'children',
        `${element}/decryption-keys/key needs a base64 key as its text or a certificate-id`,
      );
      continue;
    }
    if (content.kind === 'literal') {
      const secret = String(content.value).trim();
      if (!BASE64.test(secret)) {
        c.error(
          key,
          'children',
          `${element}/decryption-keys/key must hold a base64 key, got "${secret.slice(0, 20)}"`,
        );
        continue;
      }
      const bytes = Buffer.from(secret, 'base64');
      keys.push({ ...base, key: () => bytes });
      continue;
    }
    const value = key.text()!;
    keys.push({ ...base, key: (run) => Buffer.from(value(run).trim(), 'base64') });
  }
  return keys;
}

/**
 * What an encrypted token may use: AES key wrap, direct symmetric keys and RSA-OAEP (Entra ID's choice). No
 * password-based (PBES2: a work factor the sender picks) and no RSA1_5 (padding oracle).
 */
const JWE_ALGORITHMS = {
  keyManagementAlgorithms: [
    'dir',
    'A128KW',
    'A192KW',
    'A256KW',
    'A128GCMKW',
    'A192GCMKW',
    'A256GCMKW',
    'RSA-OAEP',
    'RSA-OAEP-256',
    'RSA-OAEP-384',
    'RSA-OAEP-512',
  ],
  contentEncryptionAlgorithms: [
    'A128CBC-HS256',
    'A192CBC-HS384',
    'A256CBC-HS512',
    'A128GCM',
    'A192GCM',
    'A256GCM',
  ],
};

/**
 * The token whose signature is checked: an encrypted token (JWE compact serialization, five parts) is opened with
 * the first decryption key that fits, and its plaintext is the signed JWT inside (a nested JWT). A plaintext that
 * is a bare claims set is handed on as an unsigned token, so require-signed-tokens decides about it as about any
 * unsigned token. A token that is not encrypted is returned as it is, decryption keys or not: as in API Management
 * (Microsoft.IdentityModel decrypts only what is a JWE), the keys are for encrypted tokens, not a requirement.
 */
export async function decryptToken(
  run: RunContext,
  token: string,
  keys: readonly DecryptionKey[],
): Promise<string> {
  if (token.split('.').length !== 5) return token;
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    throw new Refusal('JwtInvalid', 'JWT is not well formed.');
  }
  if (keys.length === 0)
    throw new Refusal('JwtInvalid', 'JWT is encrypted and the policy has no decryption keys.');
  for (const candidate of keys) {
    if (kid !== undefined && candidate.kid !== undefined && candidate.kid !== kid) continue;
    const key = candidate.key(run);
    let plaintext: Uint8Array;
    try {
      plaintext = (await compactDecrypt(token, key, JWE_ALGORITHMS)).plaintext;
    } catch {
      continue; // the next key, as API Management tries each until one succeeds
    }
    const inner = Buffer.from(plaintext).toString('utf8').trim();
    if (inner.split('.').length === 3) return inner;
    return `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(inner).toString('base64url')}.`;
  }
  throw new Refusal('JwtInvalid', 'JWT decryption failed: no decryption key opens the token.');
}

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
    timeoutMs: allowedMs(run.services, 10_000),
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

/**
 * The <required-claims> rules. LastError.Message is API Management's text (predefined-errors table of "Error
 * handling in API Management policies"): every missing claim named in one message, then the first claim whose
 * value is not allowed, with the value the token carries.
 */
export function checkRequiredClaims(
  run: RunContext,
  claimsSet: Record<string, unknown>,
  claims: readonly ClaimRule[],
): void {
  const missing = claims.filter((rule) => !(rule.name in claimsSet)).map((rule) => rule.name);
  if (missing.length > 0)
    throw new Refusal(
      'TokenClaimNotFound',
      `JWT token is missing the following claims: ${missing.join(', ')}. Access denied.`,
    );
  for (const rule of claims) {
    if (rule.values.length === 0) continue;
    const separator = rule.separator?.(run);
    const present = new Set(claimValues(claimsSet[rule.name], separator));
    const wanted = rule.values.map((v) => v(run).trim());
    const ok =
      rule.match(run) === 'any' ? wanted.some((w) => present.has(w)) : wanted.every((w) => present.has(w));
    if (!ok)
      throw new Refusal(
        'TokenClaimValueNotAllowed',
        `Claim ${rule.name} value of ${claimValues(claimsSet[rule.name], undefined).join(', ')} is not allowed. Access denied.`,
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
