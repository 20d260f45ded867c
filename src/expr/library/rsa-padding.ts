/**
 * RSASignaturePadding (Pkcs1, Pss) and RSAEncryptionPadding (Pkcs1, OAEP with a hash): the paddings RSA's members
 * take. Both compare by value, as .NET's `==` does; ToString is the mode, with the OAEP hash after it ("OaepSHA256").
 * https://learn.microsoft.com/dotnet/api/system.security.cryptography.rsasignaturepadding
 * https://learn.microsoft.com/dotnet/api/system.security.cryptography.rsaencryptionpadding
 */
import { CsException, defineType, prop } from '../runtime/core.js';
import { makeEnum } from '../runtime/enum.js';
import { CsHashAlgorithmName } from './hash-algorithm-name.js';

/** The modes' enums are not in API Management's table: values an expression reads, not types it can name. */
const SignatureMode = makeEnum('RSASignaturePaddingMode', { Pkcs1: 0, Pss: 1 });
const EncryptionMode = makeEnum('RSAEncryptionPaddingMode', { Pkcs1: 0, Oaep: 1 });

export class CsSignaturePadding {
  constructor(readonly mode: 'Pkcs1' | 'Pss') {}
}

export class CsEncryptionPadding {
  constructor(
    readonly mode: 'Pkcs1' | 'Oaep',
    readonly hash: CsHashAlgorithmName,
  ) {}
}

const PKCS1_SIGNATURE = new CsSignaturePadding('Pkcs1');
const PSS = new CsSignaturePadding('Pss');

defineType({
  name: 'RSASignaturePadding',
  namespace: 'System.Security.Cryptography',
  classes: [CsSignaturePadding],
  valueEquals: (a: CsSignaturePadding, b) => b instanceof CsSignaturePadding && a.mode === b.mode,
  props: { Mode: prop((p: CsSignaturePadding) => SignatureMode.values.get(p.mode)) },
  methods: {
    ToString: (_rt, p: CsSignaturePadding) => p.mode,
    GetHashCode: (_rt, p: CsSignaturePadding) => SignatureMode.members[p.mode],
  },
  staticProps: { Pkcs1: prop(() => PKCS1_SIGNATURE), Pss: prop(() => PSS) },
});

const NO_HASH = new CsHashAlgorithmName(null);
const oaep = (name: string): CsEncryptionPadding =>
  new CsEncryptionPadding('Oaep', new CsHashAlgorithmName(name));

defineType({
  name: 'RSAEncryptionPadding',
  namespace: 'System.Security.Cryptography',
  classes: [CsEncryptionPadding],
  valueEquals: (a: CsEncryptionPadding, b) =>
    b instanceof CsEncryptionPadding && a.mode === b.mode && a.hash.name === b.hash.name,
  props: {
    Mode: prop((p: CsEncryptionPadding) => EncryptionMode.values.get(p.mode)),
    OaepHashAlgorithm: prop((p: CsEncryptionPadding) => p.hash),
  },
  methods: {
    ToString: (_rt, p: CsEncryptionPadding) => `${p.mode}${p.hash.name ?? ''}`,
    GetHashCode: (_rt, p: CsEncryptionPadding) => EncryptionMode.members[p.mode],
  },
  staticProps: {
    Pkcs1: prop(() => new CsEncryptionPadding('Pkcs1', NO_HASH)),
    OaepSHA1: prop(() => oaep('SHA1')),
    OaepSHA256: prop(() => oaep('SHA256')),
    OaepSHA384: prop(() => oaep('SHA384')),
    OaepSHA512: prop(() => oaep('SHA512')),
  },
  staticMethods: {
    CreateOaep: (_rt, _s, args) => {
      const hash = args[0];
      if (!(hash instanceof CsHashAlgorithmName) || !hash.name) {
        throw new CsException(
          'ArgumentException',
          "The hash algorithm name cannot be null or empty. (Parameter 'hashAlgorithm')",
        );
      }
      return new CsEncryptionPadding('Oaep', hash);
    },
  },
});
