import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** 256 bits of randomness, base64url: well above the 2^-160 guessing bound of OAuth 2.1 §7.4. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Codes, refresh tokens, client secrets and registration access tokens are high-entropy random values, so a
 * plain SHA-256 is enough to keep them unusable if a store leaks (no salt or work factor is needed, unlike
 * passwords). Stores only ever see this digest.
 */
export function digest(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}

/** Compares two strings in time independent of where they differ (lengths are hashed away first). */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

export function sha256Base64Url(value: string): string {
  return createHash('sha256').update(value, 'ascii').digest('base64url');
}

// ---------------------------------------------------------------------------------------------------------
// Passwords: node:crypto scrypt, stored as `scrypt$<N>$<r>$<p>$<salt base64url>$<key base64url>`.
// ---------------------------------------------------------------------------------------------------------

const SCRYPT_DEFAULTS = { N: 16384, r: 8, p: 1, keyLength: 32 } as const;
const PASSWORD_HASH = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{16,})$/;

function scryptAsync(password: string, salt: Buffer, keyLength: number, N: number, r: number, p: number) {
  return new Promise<Buffer>((resolve, reject) => {
    // maxmem must cover 128 * N * r bytes plus headroom, or node refuses larger cost parameters
    scrypt(password, salt, keyLength, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** Hashes a password for the `users[].passwordHash` configuration field. */
export async function hashPassword(password: string): Promise<string> {
  const { N, r, p, keyLength } = SCRYPT_DEFAULTS;
  const salt = randomBytes(16);
  const key = await scryptAsync(password.normalize('NFC'), salt, keyLength, N, r, p);
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Throws a TypeError for a malformed hash: that is a configuration mistake, caught at start-up. */
export function parsePasswordHash(hash: string): {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
} {
  const m = PASSWORD_HASH.exec(hash);
  if (!m) throw new TypeError('passwordHash must look like scrypt$N$r$p$salt$key (see hashPassword())');
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (N < 2 || (N & (N - 1)) !== 0 || N > 2 ** 20 || r < 1 || r > 32 || p < 1 || p > 16) {
    throw new TypeError(`passwordHash has out-of-range scrypt parameters N=${N} r=${r} p=${p}`);
  }
  return { N, r, p, salt: Buffer.from(m[4]!, 'base64url'), key: Buffer.from(m[5]!, 'base64url') };
}

export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const { N, r, p, salt, key } = parsePasswordHash(hash);
  const candidate = await scryptAsync(password.normalize('NFC'), salt, key.length, N, r, p);
  return timingSafeEqual(candidate, key);
}

/** Used for unknown user names so that a miss costs as much time as a wrong password. */
export const DUMMY_PASSWORD_HASH = `scrypt$16384$8$1$${Buffer.alloc(16, 1).toString('base64url')}$${Buffer.alloc(32, 2).toString('base64url')}`;
