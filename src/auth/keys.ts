import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { randomToken } from './crypto.js';
import type { SigningAlgorithm } from './options.js';

type SigningKey = Exclude<Awaited<ReturnType<typeof importJWK>>, Uint8Array>;

interface RingKey {
  kid: string;
  alg: SigningAlgorithm;
  privateKey: SigningKey;
  /** Kept only to persist generated keys into the data directory. */
  privateJwk: JWK;
  publicJwk: JWK;
  /** Set when the key stops signing: it is still published until every token it signed has expired. */
  retiredAt?: number;
}

const ALGORITHMS: readonly SigningAlgorithm[] = ['ES256', 'RS256', 'EdDSA'];

/**
 * The signing keys. The first key signs; the second ("next") is already published so that clients and the
 * gateway have cached it before it starts signing; retired keys stay published for one access-token lifetime.
 * Rotation therefore never invalidates a live token.
 */
export class KeyRing {
  #keys: RingKey[];
  readonly algorithm: SigningAlgorithm;
  /** Changes whenever the published set changes, so verifiers know to rebuild their key set. */
  version = 0;

  private constructor(keys: RingKey[]) {
    this.#keys = keys;
    this.algorithm = keys[0]!.alg;
  }

  static async create(config: { algorithm?: SigningAlgorithm; keys?: JWK[] } | undefined): Promise<KeyRing> {
    const algorithm = config?.algorithm ?? 'ES256';
    if (!ALGORITHMS.includes(algorithm)) {
      throw new TypeError(
        `auth options: signingKeys.algorithm must be one of ${ALGORITHMS.join(', ')}, got "${algorithm}"`,
      );
    }
    if (config?.keys && config.keys.length > 0) {
      const keys = await Promise.all(config.keys.map((jwk, i) => importRingKey(jwk, i, algorithm)));
      if (keys.some((k) => k.alg !== keys[0]!.alg)) {
        throw new TypeError('auth options: signingKeys.keys must all use one algorithm (verifiers pin it)');
      }
      return new KeyRing(keys);
    }
    return new KeyRing([await generateRingKey(algorithm), await generateRingKey(algorithm)]);
  }

  get current(): RingKey {
    return this.#keys[0]!;
  }

  /** Signing keys (current first), for persisting generated keys; retired keys are left out. */
  privateJwks(): JWK[] {
    return this.#keys.filter((k) => k.retiredAt === undefined).map((k) => k.privateJwk);
  }

  /** Public keys for the JWKS document. */
  publicJwks(now: number, retention: number): { keys: JWK[] } {
    const kept = this.#keys.filter((k) => k.retiredAt === undefined || k.retiredAt + retention > now);
    if (kept.length !== this.#keys.length) {
      this.#keys = kept;
      this.version += 1;
    }
    return { keys: this.#keys.map((k) => k.publicJwk) };
  }

  /** Promotes the next key and generates a new next key; the old key stays published while its tokens live. */
  async rotate(now: number): Promise<void> {
    const [old, next, ...rest] = this.#keys;
    const fresh = await generateRingKey(this.algorithm);
    this.#keys = [next ?? fresh, ...(next ? [fresh] : []), { ...old!, retiredAt: now }, ...rest];
    this.version += 1;
  }
}

async function generateRingKey(alg: SigningAlgorithm): Promise<RingKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = randomToken(12);
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return {
    kid,
    alg,
    privateKey,
    publicJwk,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' },
  };
}

async function importRingKey(jwk: JWK, index: number, fallback: SigningAlgorithm): Promise<RingKey> {
  const alg = (jwk.alg ?? fallback) as SigningAlgorithm;
  if (!ALGORITHMS.includes(alg))
    throw new TypeError(`auth options: signingKeys.keys[${index}].alg "${alg}" is not supported`);
  if (typeof jwk.kid !== 'string' || jwk.kid === '')
    throw new TypeError(`auth options: signingKeys.keys[${index}] needs a kid`);
  if (!jwk.d) throw new TypeError(`auth options: signingKeys.keys[${index}] must be a private key`);
  const privateKey = (await importJWK(jwk, alg)) as SigningKey;
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, oth: _oth, ...pub } = jwk;
  return { kid: jwk.kid, alg, privateKey, publicJwk: { ...pub, alg, use: 'sig' }, privateJwk: jwk };
}
