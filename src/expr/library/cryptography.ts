/**
 * System.Security.Cryptography: hashing and HMAC, RandomNumberGenerator, Aes, and API Management's byte[].Encrypt /
 * Decrypt extension methods.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  randomInt,
} from 'node:crypto';
import { CsException, defineExtensions, defineType, type Method, prop, type Rt } from '../runtime/core.js';
import { type CsEnum, makeEnum } from '../runtime/enum.js';
import { ArrayType } from './collections.js';
import { defineEnumType } from './enums.js';
import { bytes, int, str } from './helpers.js';

// ---- hashing and HMAC ----

class CsHash {
  constructor(
    readonly algorithm: string,
    public key: Buffer | null,
  ) {}
  compute(data: Buffer): Buffer {
    return this.key
      ? createHmac(this.algorithm, this.key).update(data).digest()
      : createHash(this.algorithm).update(data).digest();
  }
}

const HASHES: Record<string, string> = {
  MD5: 'md5',
  SHA1: 'sha1',
  SHA256: 'sha256',
  SHA384: 'sha384',
  SHA512: 'sha512',
};

const hashMethods: Record<string, Method> = {
  ComputeHash: (_rt, h: CsHash, args) => {
    let data = bytes(args[0], 'buffer');
    if (args.length >= 3) data = data.subarray(int(args[1]), int(args[1]) + int(args[2]));
    return h.compute(data);
  },
  Dispose: () => null,
  Clear: () => null,
};

export const HashAlgorithmType = defineType({
  name: 'HashAlgorithm',
  namespace: 'System.Security.Cryptography',
  aliases: ['KeyedHashAlgorithm', 'HMAC'],
  classes: [CsHash],
  props: {
    Key: {
      get: (_rt, h: CsHash) => (h.key ? Buffer.from(h.key) : null),
      set: (_rt, h: CsHash, v) => {
        if (h.key === null)
          throw new CsException('InvalidOperationException', 'only HMAC algorithms have a key');
        h.key = Buffer.from(bytes(v, 'value'));
      },
    },
    HashSize: prop((h: CsHash) => createHash(h.algorithm).digest().length * 8),
  },
  methods: hashMethods,
});

for (const [name, alg] of Object.entries(HASHES)) {
  defineType({
    name,
    namespace: 'System.Security.Cryptography',
    aliases: [`${name}Managed`, `${name}CryptoServiceProvider`],
    base: HashAlgorithmType,
    test: (v) => v instanceof CsHash && v.algorithm === alg && v.key === null,
    construct: () => new CsHash(alg, null),
    staticMethods: {
      Create: () => new CsHash(alg, null),
      HashData: (_rt, _s, args) => new CsHash(alg, null).compute(bytes(args[0])),
    },
  });
  defineType({
    name: `HMAC${name}`,
    namespace: 'System.Security.Cryptography',
    base: HashAlgorithmType,
    test: (v) => v instanceof CsHash && v.algorithm === alg && v.key !== null,
    construct: (_rt, args) => new CsHash(alg, args.length ? bytes(args[0], 'key') : randomBytes(64)),
    staticMethods: {
      HashData: (_rt, _s, args) => new CsHash(alg, bytes(args[0], 'key')).compute(bytes(args[1], 'source')),
    },
  });
}

class CsRng {}
defineType({
  name: 'RandomNumberGenerator',
  namespace: 'System.Security.Cryptography',
  aliases: ['RNGCryptoServiceProvider'],
  classes: [CsRng],
  construct: () => new CsRng(),
  methods: {
    GetBytes: (_rt, _r, args) => {
      const b = args[0] as Uint8Array;
      b.set(randomBytes(b.length));
      return null;
    },
    Dispose: () => null,
  },
  staticMethods: {
    Create: () => new CsRng(),
    GetInt32: (_rt, _s, args) =>
      args.length === 1 ? randomInt(0, int(args[0])) : randomInt(int(args[0]), int(args[1])),
    GetBytes: (_rt, _s, args) => randomBytes(int(args[0])),
  },
});

// ---- symmetric encryption: Aes and the byte[].Encrypt/Decrypt extension methods ----

export const CipherModeEnum = makeEnum('CipherMode', { CBC: 1, ECB: 2, OFB: 3, CFB: 4, CTS: 5 });
defineEnumType(CipherModeEnum, 'System.Security.Cryptography');
export const PaddingModeEnum = makeEnum('PaddingMode', {
  None: 1,
  PKCS7: 2,
  Zeros: 3,
  ANSIX923: 4,
  ISO10126: 5,
});
defineEnumType(PaddingModeEnum, 'System.Security.Cryptography');

/** .NET's defaults for a new Aes, and what Encrypt("Aes", key, iv) uses. */
const DEFAULT_CIPHER_MODE: number = CipherModeEnum.members.CBC;
const DEFAULT_PADDING: number = PaddingModeEnum.members.PKCS7;

export class CsAes {
  key: Buffer = randomBytes(32);
  iv: Buffer = randomBytes(16);
  mode = DEFAULT_CIPHER_MODE;
  padding = DEFAULT_PADDING;
}

const aesProp = (k: 'key' | 'iv') => ({
  get: (_rt: Rt, a: CsAes) => Buffer.from(a[k]),
  set: (_rt: Rt, a: CsAes, v: unknown) => {
    a[k] = Buffer.from(bytes(v));
  },
});

defineType({
  name: 'Aes',
  namespace: 'System.Security.Cryptography',
  aliases: ['SymmetricAlgorithm', 'AesManaged', 'AesCryptoServiceProvider', 'RijndaelManaged'],
  classes: [CsAes],
  construct: () => new CsAes(),
  props: {
    Key: aesProp('key'),
    IV: aesProp('iv'),
    Mode: {
      get: (_rt, a: CsAes) => CipherModeEnum.values.get(CipherModeEnum.names.get(a.mode)!)!,
      set: (_rt, a: CsAes, v) => {
        a.mode = (v as CsEnum).value;
      },
    },
    Padding: {
      get: (_rt, a: CsAes) => PaddingModeEnum.values.get(PaddingModeEnum.names.get(a.padding)!)!,
      set: (_rt, a: CsAes, v) => {
        a.padding = (v as CsEnum).value;
      },
    },
    KeySize: prop((a: CsAes) => a.key.length * 8),
  },
  methods: {
    GenerateKey: (_rt, a: CsAes) => {
      a.key = randomBytes(a.key.length);
      return null;
    },
    GenerateIV: (_rt, a: CsAes) => {
      a.iv = randomBytes(16);
      return null;
    },
    Dispose: () => null,
  },
  staticMethods: { Create: () => new CsAes() },
});

function cipherSpec(args: unknown[]): { key: Buffer; iv: Buffer; mode: number; padding: number } {
  const a = args[0];
  if (a instanceof CsAes) {
    return {
      key: args[1] ? bytes(args[1]) : a.key,
      iv: args[2] ? bytes(args[2]) : a.iv,
      mode: a.mode,
      padding: a.padding,
    };
  }
  const alg = str(a, 'alg');
  if (!/^(aes|rijndael)$/i.test(alg)) {
    throw new CsException(
      'NotSupportedException',
      `symmetric algorithm '${alg}' is not supported (use "Aes")`,
    );
  }
  return {
    key: bytes(args[1], 'key'),
    iv: bytes(args[2], 'iv'),
    mode: DEFAULT_CIPHER_MODE,
    padding: DEFAULT_PADDING,
  };
}

function aesCipher(decrypt: boolean, data: Buffer, spec: ReturnType<typeof cipherSpec>): Buffer {
  const bits = spec.key.length * 8;
  if (![128, 192, 256].includes(bits))
    throw new CsException('CryptographicException', 'Specified key is not a valid size for this algorithm.');
  const mode = spec.mode === CipherModeEnum.members.ECB ? 'ecb' : 'cbc';
  const name = `aes-${bits}-${mode}`;
  try {
    const iv = mode === 'ecb' ? null : spec.iv;
    const c = decrypt ? createDecipheriv(name, spec.key, iv) : createCipheriv(name, spec.key, iv);
    c.setAutoPadding(spec.padding === PaddingModeEnum.members.PKCS7);
    return Buffer.concat([c.update(data), c.final()]);
  } catch (e) {
    throw new CsException('CryptographicException', (e as Error).message);
  }
}

/** byte[].Encrypt(alg, key, iv) / Encrypt(SymmetricAlgorithm[, key, iv]) and Decrypt, as API Management defines them. */
defineExtensions({
  declaredBy: "API Management's byte[] encryption",
  receiver: ArrayType,
  methods: {
    Encrypt: (_rt, self, args) => aesCipher(false, bytes(self), cipherSpec(args)),
    Decrypt: (_rt, self, args) => aesCipher(true, bytes(self), cipherSpec(args)),
  },
});
