/**
 * RSA.SignHash / VerifyHash: signatures over a hash the expression computed. Node signs only data it hashes itself,
 * so the encodings of RFC 8017 are applied here around Node's raw RSA operations — PKCS#1 v1.5 (the hash in its
 * DER DigestInfo, §9.2) and EMSA-PSS (§9.1, with a salt as long as the hash, as .NET's is).
 */
import {
  constants,
  createHash,
  type KeyObject,
  privateEncrypt,
  publicDecrypt,
  randomBytes,
} from 'node:crypto';

/** MGF1 (RFC 8017 §B.2.1): `length` bytes from `seed`. */
function mgf1(algorithm: string, seed: Buffer, length: number): Buffer {
  const blocks: Buffer[] = [];
  for (let counter = 0; blocks.length * seed.length < length; counter++) {
    const c = Buffer.alloc(4);
    c.writeUInt32BE(counter);
    blocks.push(createHash(algorithm).update(seed).update(c).digest());
  }
  return Buffer.concat(blocks).subarray(0, length);
}

const modulusBits = (key: KeyObject): number => key.asymmetricKeyDetails?.modulusLength ?? 0;

/** H = Hash(0x00 × 8 || mHash || salt). */
const saltedHash = (algorithm: string, hash: Buffer, salt: Buffer): Buffer =>
  createHash(algorithm).update(Buffer.alloc(8)).update(hash).update(salt).digest();

function signPss(key: KeyObject, algorithm: string, hash: Buffer): Buffer {
  const bits = modulusBits(key);
  const emBits = bits - 1;
  const emLength = Math.ceil(emBits / 8);
  const saltLength = hash.length;
  if (emLength < hash.length + saltLength + 2) throw new Error('the key is too small for this hash');
  const salt = randomBytes(saltLength);
  const h = saltedHash(algorithm, hash, salt);
  const db = Buffer.concat([Buffer.alloc(emLength - saltLength - hash.length - 2), Buffer.from([1]), salt]);
  const mask = mgf1(algorithm, h, db.length);
  for (let i = 0; i < db.length; i++) db[i]! ^= mask[i]!;
  db[0]! &= 0xff >> (8 * emLength - emBits);
  const em = Buffer.concat([db, h, Buffer.from([0xbc])]);
  const k = Math.ceil(bits / 8);
  const block = Buffer.concat([Buffer.alloc(k - em.length), em]);
  return privateEncrypt({ key, padding: constants.RSA_NO_PADDING }, block);
}

function verifyPss(key: KeyObject, algorithm: string, hash: Buffer, signature: Buffer): boolean {
  const bits = modulusBits(key);
  const emBits = bits - 1;
  const emLength = Math.ceil(emBits / 8);
  const k = Math.ceil(bits / 8);
  if (signature.length !== k || emLength < 2 * hash.length + 2) return false;
  const block = publicDecrypt({ key, padding: constants.RSA_NO_PADDING }, signature);
  if (block.length !== k || (k > emLength && block[0] !== 0)) return false;
  const em = block.subarray(k - emLength);
  if (em[em.length - 1] !== 0xbc) return false;
  const db = Buffer.from(em.subarray(0, emLength - hash.length - 1));
  const h = em.subarray(emLength - hash.length - 1, emLength - 1);
  const topMask = 0xff >> (8 * emLength - emBits);
  if ((db[0]! & ~topMask) !== 0) return false;
  const mask = mgf1(algorithm, h, db.length);
  for (let i = 0; i < db.length; i++) db[i]! ^= mask[i]!;
  db[0]! &= topMask;
  const separator = db.length - hash.length - 1;
  if (db[separator] !== 1 || db.subarray(0, separator).some((b) => b !== 0)) return false;
  return saltedHash(algorithm, hash, db.subarray(separator + 1)).equals(h);
}

/** DER DigestInfo prefixes (RFC 8017 §9.2 note 1), by Node's digest name. */
const DIGEST_INFO: Readonly<Record<string, string>> = {
  md5: '3020300c06082a864886f70d020505000410',
  sha1: '3021300906052b0e03021a05000414',
  sha256: '3031300d060960864801650304020105000420',
  sha384: '3041300d060960864801650304020205000430',
  sha512: '3051300d060960864801650304020305000440',
};

/** The hash's length for its algorithm: .NET refuses a hash of another length. */
export const hashLength = (algorithm: string): number => createHash(algorithm).digest().length;

const digestInfo = (algorithm: string, hash: Buffer): Buffer =>
  Buffer.concat([Buffer.from(DIGEST_INFO[algorithm]!, 'hex'), hash]);

export function signHash(key: KeyObject, algorithm: string, hash: Buffer, pss: boolean): Buffer {
  return pss
    ? signPss(key, algorithm, hash)
    : privateEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, digestInfo(algorithm, hash));
}

/** False for any signature that does not verify, as .NET answers. */
export function verifyHash(
  key: KeyObject,
  algorithm: string,
  hash: Buffer,
  signature: Buffer,
  pss: boolean,
): boolean {
  try {
    if (pss) return verifyPss(key, algorithm, hash, signature);
    return publicDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, signature).equals(
      digestInfo(algorithm, hash),
    );
  } catch {
    return false;
  }
}
