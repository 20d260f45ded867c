/**
 * AsymmetricAlgorithm and RSA: verify or make a signature, encrypt or decrypt, with a key read from PEM, DER, .NET's
 * XML, or a certificate (RSACertificateExtensions.GetRSAPublicKey in public-key.ts) — node:crypto underneath.
 * https://learn.microsoft.com/dotnet/api/system.security.cryptography.rsa
 *
 * Not offered: ExportParameters/ImportParameters and RSA.Create(RSAParameters), as RSAParameters is not a type API
 * Management allows; the Try* forms that write into a Span; the encrypted-PKCS#8 members, which take a password
 * and PbeParameters (not allowed either).
 */
import {
  constants,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  privateDecrypt,
  publicEncrypt,
  sign,
  verify,
} from 'node:crypto';
import { CsException, defineType, LimitError, prop, type Rt, step } from '../runtime/core.js';
import { nodeHash } from './hash-algorithm-name.js';
import { bytes, int, setOut, str } from './helpers.js';
import { pemBlocks } from './pem.js';
import { CsEncryptionPadding, CsSignaturePadding } from './rsa-padding.js';
import { hashLength, signHash, verifyHash } from './rsa-sign-hash.js';
import { fromXml, toXml } from './rsa-xml.js';
import { derElementLength } from './x509-fields.js';

const cryptographic = (message: string): CsException => new CsException('CryptographicException', message);

/**
 * A key is generated only when one is needed, as .NET does (RSA.Create() then ImportFromPem never generates one).
 * Generating is the one costly step an expression could repeat per request: sizes are held to what is generated in
 * well under a second. Imported keys may be larger, up to what .NET's providers accept.
 */
const MAX_GENERATED_BITS = 4096;
const MAX_KEY_BITS = 16384;
const DEFAULT_BITS = 2048;

export class CsRsa {
  #key: KeyObject | null;
  #size: number;
  constructor(key: KeyObject | null, size = DEFAULT_BITS) {
    this.#key = key;
    this.#size = size;
  }
  get keySize(): number {
    return this.#key ? (this.#key.asymmetricKeyDetails?.modulusLength ?? this.#size) : this.#size;
  }
  /** Setting another size drops the key; the next use generates one of that size. */
  set keySize(bits: number) {
    if (bits < 512 || bits > MAX_KEY_BITS || bits % 8 !== 0)
      throw cryptographic('Specified key is not a valid size for this algorithm.');
    if (bits !== this.keySize) this.#key = null;
    this.#size = bits;
  }
  key(rt: Rt): KeyObject {
    if (!this.#key) {
      if (this.#size > MAX_GENERATED_BITS) {
        throw new LimitError(
          `generating an RSA key of ${this.#size} bits exceeds the limit of ${MAX_GENERATED_BITS} bits`,
        );
      }
      step(rt);
      this.#key = generateKeyPairSync('rsa', { modulusLength: this.#size }).privateKey;
    }
    return this.#key;
  }
  privateKey(rt: Rt): KeyObject {
    const key = this.key(rt);
    if (key.type !== 'private') throw cryptographic('The key does not contain a private key.');
    return key;
  }
  publicKey(rt: Rt): KeyObject {
    const key = this.key(rt);
    return key.type === 'private' ? createPublicKey(key) : key;
  }
  import(key: KeyObject): void {
    if (key.asymmetricKeyType !== 'rsa') throw cryptographic('The key is not an RSA key.');
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits > MAX_KEY_BITS) throw cryptographic('Specified key is not a valid size for this algorithm.');
    this.#key = key;
  }
}

type DerFormat = 'spki' | 'pkcs1-public' | 'pkcs1-private' | 'pkcs8';

/** Import(source, out bytesRead): the first DER element of `source` as a key of `format`. */
function importDer(rsa: CsRsa, args: unknown[], format: DerFormat): null {
  const source = bytes(args[0], 'source');
  const length = derElementLength(source);
  const der = source.subarray(0, length);
  let key: KeyObject;
  try {
    key =
      format === 'spki' || format === 'pkcs1-public'
        ? createPublicKey({ key: der, format: 'der', type: format === 'spki' ? 'spki' : 'pkcs1' })
        : createPrivateKey({ key: der, format: 'der', type: format === 'pkcs8' ? 'pkcs8' : 'pkcs1' });
  } catch {
    throw cryptographic('ASN1 corrupted data.');
  }
  rsa.import(key);
  if (args.length > 1) setOut(args[1], length);
  return null;
}

const KEY_LABELS = [
  'PUBLIC KEY',
  'RSA PUBLIC KEY',
  'PRIVATE KEY',
  'RSA PRIVATE KEY',
  'ENCRYPTED PRIVATE KEY',
] as const;

/** ImportFromPem: the one key among the PEM blocks of `input`; other blocks (a CERTIFICATE) are skipped. */
function importPem(rsa: CsRsa, input: string): null {
  const keys = pemBlocks(input, KEY_LABELS);
  if (keys.length === 0) {
    throw new CsException(
      'ArgumentException',
      "No supported key formats were found. Check that the input represents the contents of a PEM-encoded key file, not the path to such a file. (Parameter 'input')",
    );
  }
  if (keys.length > 1) {
    throw new CsException(
      'ArgumentException',
      "The input contains multiple keys, but only one key can be imported. (Parameter 'input')",
    );
  }
  const { text: block, label } = keys[0]!;
  if (label === 'ENCRYPTED PRIVATE KEY') {
    throw new CsException(
      'ArgumentException',
      "An encrypted key was found, but no password was provided. Use ImportFromEncryptedPem to import this key. (Parameter 'input')",
    );
  }
  let key: KeyObject;
  try {
    key = label.includes('PRIVATE') ? createPrivateKey(block) : createPublicKey(block);
  } catch {
    throw cryptographic('ASN1 corrupted data.');
  }
  rsa.import(key);
  return null;
}

/** .NET writes PEM with "\n" line ends and no newline after the END line. */
const pem = (text: string | Buffer): string => text.toString().trimEnd();

// ---- signatures and encryption ----

function signaturePadding(v: unknown): number {
  if (!(v instanceof CsSignaturePadding))
    throw new CsException('ArgumentNullException', "Value cannot be null. (Parameter 'padding')");
  return v.mode === 'Pss' ? constants.RSA_PKCS1_PSS_PADDING : constants.RSA_PKCS1_PADDING;
}

/** SignData(data[, offset, count], hashAlgorithm, padding): the data is hashed with the named hash, then signed. */
function signData(rt: Rt, rsa: CsRsa, args: unknown[]): Buffer {
  const [data, hash, padding] = dataArgs(args, 0);
  return sign(nodeHash(hash), data, {
    key: rsa.privateKey(rt),
    padding: signaturePadding(padding),
    saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
  });
}

/** VerifyData(data[, offset, count], signature, hashAlgorithm, padding): false for any signature that does not verify. */
function verifyData(rt: Rt, rsa: CsRsa, args: unknown[]): boolean {
  const withRange = args.length === 6;
  const data = withRange ? slice(args[0], args[1], args[2]) : bytes(args[0], 'data');
  const rest = args.slice(withRange ? 3 : 1);
  const signature = bytes(rest[0], 'signature');
  const algorithm = nodeHash(rest[1]);
  const paddingMode = signaturePadding(rest[2]);
  try {
    return verify(
      algorithm,
      data,
      { key: rsa.publicKey(rt), padding: paddingMode, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
      signature,
    );
  } catch {
    return false;
  }
}

function slice(data: unknown, offset: unknown, count: unknown): Buffer {
  const all = bytes(data, 'data');
  const from = int(offset, 'offset');
  const length = int(count, 'count');
  if (from < 0 || length < 0 || from + length > all.length) {
    throw new CsException(
      'ArgumentOutOfRangeException',
      'Specified argument was out of the range of valid values.',
    );
  }
  return all.subarray(from, from + length);
}

/** The data (or its offset/count slice) and the arguments after it. */
function dataArgs(args: unknown[], extra: number): [Buffer, unknown, unknown] {
  if (args.length === 5 + extra) {
    return [slice(args[0], args[1], args[2]), args[3 + extra], args[4 + extra]];
  }
  return [bytes(args[0], 'data'), args[1 + extra], args[2 + extra]];
}

/** SignHash(hash, hashAlgorithm, padding) and VerifyHash(hash, signature, hashAlgorithm, padding). */
function hashArgs(hashArg: unknown, algorithmArg: unknown, padding: unknown): [Buffer, string, boolean] {
  const hash = bytes(hashArg, 'hash');
  const algorithm = nodeHash(algorithmArg);
  const pss = signaturePadding(padding) === constants.RSA_PKCS1_PSS_PADDING;
  if (hash.length !== hashLength(algorithm)) throw cryptographic('The parameter is incorrect.');
  return [hash, algorithm, pss];
}

function encryptionOptions(key: KeyObject, v: unknown): Parameters<typeof publicEncrypt>[0] {
  if (!(v instanceof CsEncryptionPadding))
    throw new CsException('ArgumentNullException', "Value cannot be null. (Parameter 'padding')");
  return v.mode === 'Pkcs1'
    ? { key, padding: constants.RSA_PKCS1_PADDING }
    : { key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: nodeHash(v.hash, 'padding') };
}

const checked = <T>(work: () => T): T => {
  try {
    return work();
  } catch (e) {
    if (e instanceof CsException) throw e;
    throw cryptographic((e as Error).message);
  }
};

export const AsymmetricAlgorithmType = defineType({
  name: 'AsymmetricAlgorithm',
  namespace: 'System.Security.Cryptography',
  // RSA is the one asymmetric algorithm the table allows, so every AsymmetricAlgorithm here is one.
  test: (v) => v instanceof CsRsa,
  props: {
    KeySize: {
      get: (_rt, a: CsRsa) => a.keySize,
      set: (_rt, a: CsRsa, v) => {
        a.keySize = int(v, 'value');
      },
    },
    SignatureAlgorithm: prop(() => 'RSA'),
    KeyExchangeAlgorithm: prop(() => 'RSA'),
  },
  methods: {
    ExportSubjectPublicKeyInfo: (rt, a: CsRsa) => a.publicKey(rt).export({ format: 'der', type: 'spki' }),
    ExportSubjectPublicKeyInfoPem: (rt, a: CsRsa) =>
      pem(a.publicKey(rt).export({ format: 'pem', type: 'spki' })),
    ExportPkcs8PrivateKey: (rt, a: CsRsa) => a.privateKey(rt).export({ format: 'der', type: 'pkcs8' }),
    ExportPkcs8PrivateKeyPem: (rt, a: CsRsa) =>
      pem(a.privateKey(rt).export({ format: 'pem', type: 'pkcs8' })),
    ImportSubjectPublicKeyInfo: (_rt, a: CsRsa, args) => importDer(a, args, 'spki'),
    ImportPkcs8PrivateKey: (_rt, a: CsRsa, args) => importDer(a, args, 'pkcs8'),
    ImportFromPem: (_rt, a: CsRsa, args) => importPem(a, str(args[0], 'input')),
    ToXmlString: (rt, a: CsRsa, args) => toXml(a, rt, args[0] === true),
    FromXmlString: (_rt, a: CsRsa, args) => fromXml(a, str(args[0], 'xmlString')),
    Dispose: () => null,
    Clear: () => null,
  },
});

defineType({
  name: 'RSA',
  namespace: 'System.Security.Cryptography',
  base: AsymmetricAlgorithmType,
  classes: [CsRsa],
  methods: {
    SignData: (rt, a: CsRsa, args) => checked(() => signData(rt, a, args)),
    VerifyData: (rt, a: CsRsa, args) => verifyData(rt, a, args),
    SignHash: (rt, a: CsRsa, args) => {
      const [hash, algorithm, pss] = hashArgs(args[0], args[1], args[2]);
      return checked(() => signHash(a.privateKey(rt), algorithm, hash, pss));
    },
    VerifyHash: (rt, a: CsRsa, args) => {
      const [hash, algorithm, pss] = hashArgs(args[0], args[2], args[3]);
      return verifyHash(a.publicKey(rt), algorithm, hash, bytes(args[1], 'signature'), pss);
    },
    Encrypt: (rt, a: CsRsa, args) =>
      checked(() => publicEncrypt(encryptionOptions(a.publicKey(rt), args[1]), bytes(args[0], 'data'))),
    Decrypt: (rt, a: CsRsa, args) =>
      checked(() => privateDecrypt(encryptionOptions(a.privateKey(rt), args[1]), bytes(args[0], 'data'))),
    ExportRSAPublicKey: (rt, a: CsRsa) => a.publicKey(rt).export({ format: 'der', type: 'pkcs1' }),
    ExportRSAPublicKeyPem: (rt, a: CsRsa) => pem(a.publicKey(rt).export({ format: 'pem', type: 'pkcs1' })),
    ExportRSAPrivateKey: (rt, a: CsRsa) => a.privateKey(rt).export({ format: 'der', type: 'pkcs1' }),
    ExportRSAPrivateKeyPem: (rt, a: CsRsa) => pem(a.privateKey(rt).export({ format: 'pem', type: 'pkcs1' })),
    ImportRSAPublicKey: (_rt, a: CsRsa, args) => importDer(a, args, 'pkcs1-public'),
    ImportRSAPrivateKey: (_rt, a: CsRsa, args) => importDer(a, args, 'pkcs1-private'),
  },
  staticMethods: {
    Create: (_rt, _s, args) => {
      const rsa = new CsRsa(null);
      if (args.length > 0) rsa.keySize = int(args[0], 'keySizeInBits');
      return rsa;
    },
  },
});
