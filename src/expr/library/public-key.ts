/**
 * PublicKey (a certificate's SubjectPublicKeyInfo) and RSACertificateExtensions (GetRSAPublicKey,
 * GetRSAPrivateKey, CopyWithPrivateKey), both as static methods and as extension methods of X509Certificate2 —
 * `context.Request.Certificate.GetRSAPublicKey().VerifyData(…)`.
 * https://learn.microsoft.com/dotnet/api/system.security.cryptography.x509certificates.publickey
 * https://learn.microsoft.com/dotnet/api/system.security.cryptography.x509certificates.rsacertificateextensions
 *
 * Not offered: EncodedKeyValue, EncodedParameters and the (Oid, AsnEncodedData, AsnEncodedData) constructor
 * (AsnEncodedData is not an allowed type), and GetDSAPublicKey / GetECDsaPublicKey / GetECDiffieHellmanPublicKey
 * (DSA and the elliptic-curve classes are not allowed either).
 */
import { createPublicKey } from 'node:crypto';
import { CertificateModel } from '../context.js';
import { CsException, defineExtensions, defineType, type Method, prop, type Rt } from '../runtime/core.js';
import { bytes, setOut } from './helpers.js';
import { oidOf } from './oid.js';
import { CsRsa } from './rsa.js';
import { CertificateType } from './x509-certificate.js';
import { CsPublicKey, certificateFields, derElementLength, PRIVATE_KEYS } from './x509-fields.js';

const RSA_OID = '1.2.840.113549.1.1.1';

function rsaOf(key: CsPublicKey): CsRsa | null {
  if (key.algorithm !== RSA_OID) return null;
  const rsa = new CsRsa(null);
  rsa.import(createPublicKey({ key: key.spki, format: 'der', type: 'spki' }));
  return rsa;
}

function certificate(v: unknown): CertificateModel {
  if (v instanceof CertificateModel) return v;
  throw new CsException('ArgumentNullException', "Value cannot be null. (Parameter 'certificate')");
}

/** Null when the certificate's key is not RSA, as .NET returns. */
const getRsaPublicKey = (c: CertificateModel): CsRsa | null =>
  rsaOf(new CsPublicKey(certificateFields(c).spki));

/** A new RSA object over the certificate's private key each call, as .NET gives; null without one. */
function getRsaPrivateKey(c: CertificateModel): CsRsa | null {
  const key = PRIVATE_KEYS.get(c);
  return key ? new CsRsa(key) : null;
}

function copyWithPrivateKey(rt: Rt, c: CertificateModel, privateKey: unknown): CertificateModel {
  if (!(privateKey instanceof CsRsa))
    throw new CsException('ArgumentNullException', "Value cannot be null. (Parameter 'privateKey')");
  if (PRIVATE_KEYS.has(c))
    throw new CsException(
      'InvalidOperationException',
      'The certificate already has an associated private key.',
    );
  const ownKey = privateKey.privateKey(rt);
  const spki = createPublicKey(ownKey).export({ format: 'der', type: 'spki' });
  if (!spki.equals(certificateFields(c).spki)) {
    throw new CsException(
      'ArgumentException',
      "The provided key does not match the public key for this certificate. (Parameter 'privateKey')",
    );
  }
  const copy = new CertificateModel(c);
  PRIVATE_KEYS.set(copy, ownKey);
  return copy;
}

const extensions: Record<string, Method> = {
  GetRSAPublicKey: (_rt, c: CertificateModel) => getRsaPublicKey(c),
  GetRSAPrivateKey: (_rt, c: CertificateModel) => getRsaPrivateKey(c),
  CopyWithPrivateKey: (rt, c: CertificateModel, args) => copyWithPrivateKey(rt, c, args[0]),
};

defineExtensions({
  declaredBy: 'System.Security.Cryptography.X509Certificates.RSACertificateExtensions',
  receiver: CertificateType,
  methods: extensions,
});

defineType({
  name: 'RSACertificateExtensions',
  namespace: 'System.Security.Cryptography.X509Certificates',
  staticMethods: Object.fromEntries(
    Object.entries(extensions).map(([name, method]) => [
      name,
      ((rt, _s, args, typeArgs) => method(rt, certificate(args[0]), args.slice(1), typeArgs)) as Method,
    ]),
  ),
});

defineType({
  name: 'PublicKey',
  namespace: 'System.Security.Cryptography.X509Certificates',
  classes: [CsPublicKey],
  /** new PublicKey(AsymmetricAlgorithm): the key's SubjectPublicKeyInfo. */
  construct: (rt, args) => {
    if (!(args[0] instanceof CsRsa))
      throw new CsException('ArgumentNullException', "Value cannot be null. (Parameter 'key')");
    return new CsPublicKey(args[0].publicKey(rt).export({ format: 'der', type: 'spki' }));
  },
  props: {
    Oid: prop((k: CsPublicKey) => oidOf(k.algorithm)),
    /** Obsolete since .NET 6 but still answered for RSA; other algorithms are NotSupportedException there too. */
    Key: prop((k: CsPublicKey) => {
      const rsa = rsaOf(k);
      if (!rsa)
        throw new CsException('NotSupportedException', 'The certificate key algorithm is not supported.');
      return rsa;
    }),
  },
  methods: {
    GetRSAPublicKey: (_rt, k: CsPublicKey) => rsaOf(k),
    ExportSubjectPublicKeyInfo: (_rt, k: CsPublicKey) => Buffer.from(k.spki),
  },
  staticMethods: {
    CreateFromSubjectPublicKeyInfo: (_rt, _s, args) => {
      // The key is the first DER element of source; bytesRead is its length.
      const length = derElementLength(bytes(args[0], 'source'));
      const key = new CsPublicKey(Buffer.from(bytes(args[0]).subarray(0, length)));
      setOut(args[1], length);
      return key;
    },
  },
});
