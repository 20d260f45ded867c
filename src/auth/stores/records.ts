import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** What the durable stores (Redis, embedded) share about the records they hand out and the secrets they keep. */

/** Freezes a record read back from storage, so a caller cannot change stored state except through an operation. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The kinds of record stored sealed: keyed by a secret identifier (a cookie, a URL parameter, a user + client). */
export type SealedKind = 'session' | 'interaction' | 'consent';

const IV_BYTES = 12;
const TAG_BYTES = 16;

function sealingKey(kind: SealedKind, identifier: string): Buffer {
  return Buffer.from(hkdfSync('sha256', identifier, '', `portcullis auth ${kind}`, 32));
}

/**
 * Seals `value` (as JSON) with AES-256-GCM under a key derived from the secret `identifier`, with `where` (the
 * storage key) as associated data: storage holds nothing that lets anyone act as a user, and a sealed value
 * moved under another key does not open. Layout: iv ‖ tag ‖ ciphertext.
 */
export function seal(kind: SealedKind, identifier: string, where: string, value: unknown): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(kind, identifier), iv);
  cipher.setAAD(Buffer.from(where));
  const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The value seal() sealed, or undefined when `sealed` was tampered with or sealed for another identifier or key. */
export function unseal<T>(
  kind: SealedKind,
  identifier: string,
  where: string,
  sealed: Uint8Array,
): T | undefined {
  if (sealed.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv(
      'aes-256-gcm',
      sealingKey(kind, identifier),
      sealed.subarray(0, IV_BYTES),
    );
    decipher.setAAD(Buffer.from(where));
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const plain = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    return JSON.parse(plain.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}
