/** Guid, Math, Random (including .NET's seeded sequence), hashing and HMAC. (Regex lives in regex.ts.) */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  randomInt,
  randomUUID,
} from 'node:crypto';
import { asNumber, compare, numRank } from '../runtime/convert.js';
import {
  CsException,
  defineExtensions,
  defineType,
  formatError,
  type Method,
  prop,
  type Rt,
} from '../runtime/core.js';
import { CsEnum, makeEnum } from '../runtime/enum.js';
import { CsDecimal, CsDouble, CsGuid } from '../runtime/values.js';
import { ArrayType } from './collections.js';
import { defineEnumType, MidpointRounding } from './enums.js';
import { hashString, int, optStr, setOut, str } from './helpers.js';
import { roundHalfEven } from './primitives.js';
import { bytes } from './text.js';

// ---- Guid ----

const GUID_RE =
  /^[{(]?([0-9a-fA-F]{8})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{12})[})]?$/;

function parseGuid(s: string): CsGuid {
  const m = GUID_RE.exec(s.trim());
  if (!m) throw formatError(`Unrecognized Guid format.`);
  return new CsGuid(`${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}`.toLowerCase());
}

export const GuidType = defineType({
  name: 'Guid',
  namespace: 'System',
  classes: [CsGuid],
  defaultValue: new CsGuid('00000000-0000-0000-0000-000000000000'),
  construct: (_rt, args) =>
    args.length ? parseGuid(str(args[0])) : new CsGuid('00000000-0000-0000-0000-000000000000'),
  methods: {
    ToString: (_rt, g: CsGuid, args) => {
      const f = args.length ? (optStr(args[0]) ?? 'D') : 'D';
      switch (f) {
        case 'D':
        case 'd':
        case '':
          return g.value;
        case 'N':
        case 'n':
          return g.value.replace(/-/g, '');
        case 'B':
        case 'b':
          return `{${g.value}}`;
        case 'P':
        case 'p':
          return `(${g.value})`;
        default:
          throw formatError('Format string can be only "D", "d", "N", "n", "P", "p", "B", "b", "X" or "x".');
      }
    },
    GetHashCode: (_rt, g: CsGuid) => hashString(g.value),
    ToByteArray: (_rt, g: CsGuid) => {
      const h = g.value.replace(/-/g, '');
      const b = Buffer.from(h, 'hex');
      // .NET stores the first three groups little-endian.
      return Buffer.concat([
        b.subarray(0, 4).reverse(),
        b.subarray(4, 6).reverse(),
        b.subarray(6, 8).reverse(),
        b.subarray(8),
      ]);
    },
  },
  staticProps: { Empty: prop(() => new CsGuid('00000000-0000-0000-0000-000000000000')) },
  staticMethods: {
    NewGuid: () => new CsGuid(randomUUID()),
    Parse: (_rt, _s, args) => parseGuid(str(args[0], 'input')),
    TryParse: (_rt, _s, args) => {
      try {
        setOut(args[1], parseGuid(str(args[0])));
        return true;
      } catch {
        setOut(args[1], new CsGuid('00000000-0000-0000-0000-000000000000'));
        return false;
      }
    },
  },
});

// ---- Math ----

/** Re-wraps a JS number in the representation of the operands (Math.Abs(int) is int, Math.Abs(double) double). */
function like(sample: unknown, v: number): unknown {
  if (typeof sample === 'number') return v;
  if (typeof sample === 'bigint') return BigInt(v);
  if (sample instanceof CsDecimal) return new CsDecimal(v);
  return new CsDouble(v);
}

const d1 =
  (f: (x: number) => number): Method =>
  (_rt, _s, args) =>
    new CsDouble(f(asNumber(args[0])));

function round(args: unknown[]): unknown {
  const v = asNumber(args[0]);
  let digits = 0;
  let mode: number = MidpointRounding.members.ToEven;
  for (const a of args.slice(1)) {
    if (a instanceof CsEnum) mode = a.value;
    else digits = int(a);
  }
  const f = 10 ** digits;
  let r: number;
  if (mode === MidpointRounding.members.AwayFromZero)
    r = (Math.sign(v) * Math.round(Math.abs(v) * f + 1e-9 * 0)) / f;
  else if (mode === MidpointRounding.members.ToZero) r = Math.trunc(v * f) / f;
  else r = roundHalfEven(v, digits);
  return args[0] instanceof CsDecimal ? new CsDecimal(r) : new CsDouble(r);
}

export const MathType = defineType({
  name: 'Math',
  namespace: 'System',
  staticProps: { PI: prop(() => new CsDouble(Math.PI)), E: prop(() => new CsDouble(Math.E)) },
  staticMethods: {
    Abs: (_rt, _s, args) => {
      const v = args[0];
      if (v === -2147483648)
        throw new CsException(
          'OverflowException',
          'Negating the minimum value of a twos complement number is invalid.',
        );
      if (typeof v === 'bigint') return v < 0n ? -v : v;
      return like(v, Math.abs(asNumber(v)));
    },
    Max: (_rt, _s, args) => {
      const [a, b] = args;
      const r = numRank(a) >= numRank(b) ? a : b;
      return compare(a, b) >= 0 ? like(r, asNumber(a)) : like(r, asNumber(b));
    },
    Min: (_rt, _s, args) => {
      const [a, b] = args;
      const r = numRank(a) >= numRank(b) ? a : b;
      return compare(a, b) <= 0 ? like(r, asNumber(a)) : like(r, asNumber(b));
    },
    Floor: (_rt, _s, args) =>
      like(args[0] instanceof CsDecimal ? args[0] : new CsDouble(0), Math.floor(asNumber(args[0]))),
    Ceiling: (_rt, _s, args) =>
      like(args[0] instanceof CsDecimal ? args[0] : new CsDouble(0), Math.ceil(asNumber(args[0]))),
    Truncate: (_rt, _s, args) =>
      like(args[0] instanceof CsDecimal ? args[0] : new CsDouble(0), Math.trunc(asNumber(args[0]))),
    Round: (_rt, _s, args) => round(args),
    Sign: (_rt, _s, args) => Math.sign(asNumber(args[0])),
    Pow: (_rt, _s, args) => new CsDouble(asNumber(args[0]) ** asNumber(args[1])),
    Sqrt: d1(Math.sqrt),
    Log: (_rt, _s, args) =>
      new CsDouble(
        args.length > 1
          ? Math.log(asNumber(args[0])) / Math.log(asNumber(args[1]))
          : Math.log(asNumber(args[0])),
      ),
    Log10: d1(Math.log10),
    Log2: d1(Math.log2),
    Exp: d1(Math.exp),
    Sin: d1(Math.sin),
    Cos: d1(Math.cos),
    Tan: d1(Math.tan),
    Atan: d1(Math.atan),
    Atan2: (_rt, _s, args) => new CsDouble(Math.atan2(asNumber(args[0]), asNumber(args[1]))),
    Clamp: (_rt, _s, args) => {
      const [v, lo, hi] = args;
      return compare(v, lo) < 0 ? lo : compare(v, hi) > 0 ? hi : v;
    },
  },
});

// ---- Random ----

/**
 * System.Random. Unseeded instances use the platform CSPRNG. Seeded instances reproduce .NET's legacy subtractive
 * generator (Knuth), so `new Random(42).Next(100)` gives the same numbers as in API Management.
 */
export class CsRandom {
  private seedArray: number[] | null = null;
  private inext = 0;
  private inextp = 21;
  constructor(seed: number | null) {
    if (seed === null) return;
    const MBIG = 2147483647;
    const sa = new Array<number>(56).fill(0);
    const subtraction = seed === -2147483648 ? 2147483647 : Math.abs(seed);
    let mj = 161803398 - subtraction;
    sa[55] = mj;
    let mk = 1;
    for (let i = 1; i < 55; i++) {
      const ii = (21 * i) % 55;
      sa[ii] = mk;
      mk = mj - mk;
      if (mk < 0) mk += MBIG;
      mj = sa[ii]!;
    }
    for (let k = 1; k < 5; k++) {
      for (let i = 1; i < 56; i++) {
        sa[i] = (sa[i]! - sa[1 + ((i + 30) % 55)]!) | 0;
        if (sa[i]! < 0) sa[i] = sa[i]! + MBIG;
      }
    }
    this.seedArray = sa;
  }
  private internalSample(): number {
    const sa = this.seedArray!;
    let locINext = this.inext + 1;
    if (locINext >= 56) locINext = 1;
    let locINextp = this.inextp + 1;
    if (locINextp >= 56) locINextp = 1;
    let ret = (sa[locINext]! - sa[locINextp]!) | 0;
    if (ret === 2147483647) ret--;
    if (ret < 0) ret += 2147483647;
    sa[locINext] = ret;
    this.inext = locINext;
    this.inextp = locINextp;
    return ret;
  }
  sample(): number {
    if (!this.seedArray) return randomInt(0, 2 ** 47) / 2 ** 47;
    return this.internalSample() * (1.0 / 2147483647);
  }
  next(min: number, max: number): number {
    if (min > max)
      throw new CsException('ArgumentOutOfRangeException', "'minValue' cannot be greater than maxValue.");
    if (!this.seedArray) return min === max ? min : randomInt(min, max);
    const range = max - min;
    return Math.trunc(this.sample() * range) + min;
  }
}

export const RandomType = defineType({
  name: 'Random',
  namespace: 'System',
  classes: [CsRandom],
  construct: (_rt, args) => new CsRandom(args.length ? int(args[0]) : null),
  methods: {
    Next: (_rt, r: CsRandom, args) => {
      if (args.length === 0) return r.next(0, 2147483647);
      if (args.length === 1) {
        const max = int(args[0]);
        if (max < 0)
          throw new CsException('ArgumentOutOfRangeException', "'maxValue' must be greater than zero.");
        return r.next(0, max);
      }
      return r.next(int(args[0]), int(args[1]));
    },
    NextDouble: (_rt, r: CsRandom) => new CsDouble(r.sample()),
    NextBytes: (_rt, r: CsRandom, args) => {
      const b = args[0] as Uint8Array;
      for (let i = 0; i < b.length; i++) b[i] = r.next(0, 256);
      return null;
    },
  },
  staticProps: { Shared: prop(() => new CsRandom(null)) },
});

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
