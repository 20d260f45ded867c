/**
 * System.Security.Cryptography.X509Certificates: X509Certificate and X509Certificate2 (read-only: the client
 * certificate of a request, or one an expression builds from its bytes), X500DistinguishedName, and the enum
 * X509ContentType. X509NameType and GetNameInfo are in x509-name-type.ts, PublicKey and RSACertificateExtensions
 * in public-key.ts, reading certificates from bytes and PEM in x509-bytes.ts.
 * https://learn.microsoft.com/dotnet/api/system.security.cryptography.x509certificates.x509certificate2
 *
 * Not offered: CreateFromCertFile and CreateFromSignedFile (expressions have no file system), Handle (a native
 * pointer), Import (.NET throws PlatformNotSupportedException: certificates are immutable). X509Certificate2's
 * ToString(true) is refused: it words the extensions as the operating system's formatter does.
 */
import { createHash } from 'node:crypto';
import { thumbprintOf } from '../../certificate-thumbprint.js';
import { CertificateModel } from '../context.js';
import { toDotNetStringRt } from '../runtime/convert.js';
import { CsException, defineType, prop, type Rt } from '../runtime/core.js';
import { makeEnum } from '../runtime/enum.js';
import { CsDateTime } from '../runtime/values.js';
import { defineEnumType } from './enums.js';
import { nodeHash } from './hash-algorithm-name.js';
import { arity, bool, bytes, enumValue, str } from './helpers.js';
import { oidOf } from './oid.js';
import { CsRsa } from './rsa.js';
import { certificateFromBytes, certificateFromPem, contentType } from './x509-bytes.js';
import { CsPublicKey, certificateFields, PRIVATE_KEYS } from './x509-fields.js';
import { nameInfo, X509NameTypeEnum } from './x509-name-type.js';

const NAMESPACE = 'System.Security.Cryptography.X509Certificates';

export const X509ContentTypeEnum = makeEnum('X509ContentType', {
  Unknown: 0,
  Cert: 1,
  SerializedCert: 2,
  Pfx: 3,
  Pkcs12: 3,
  SerializedStore: 4,
  Pkcs7: 5,
  Authenticode: 6,
});
defineEnumType(X509ContentTypeEnum, NAMESPACE);

/** `new X509Certificate(bytes)`: the base class's own instances, which have none of X509Certificate2's members. */
export class BaseCertificate extends CertificateModel {}

/** X500DistinguishedName: the table allows only Name, the name as Subject and Issuer print it. */
export class DistinguishedName {
  constructor(readonly name: string) {}
}
defineType({
  name: 'X500DistinguishedName',
  namespace: NAMESPACE,
  classes: [DistinguishedName],
  props: { Name: prop((n: DistinguishedName) => n.name) },
});

const hex = (b: Buffer): string => b.toString('hex').toUpperCase();

/** Serial numbers, hashes and keys .NET prints as upper-case hex; GetSerialNumber is little-endian. */
function certHash(c: CertificateModel, args: unknown[]): Buffer {
  const algorithm = args.length > 0 ? nodeHash(args[0]) : 'sha1';
  return createHash(algorithm).update(certificateFields(c).node.raw).digest();
}

const localDateString = (rt: Rt, d: Date): string => toDotNetStringRt(rt, CsDateTime.fromDate(d, 'Local'));

/** X509Certificate.Equals: the same issuer and serial number, as .NET compares them. */
function sameCertificate(c: CertificateModel, other: unknown): boolean {
  return (
    other instanceof CertificateModel &&
    c.issuer === other.issuer &&
    certificateFields(c).serial.equals(certificateFields(other).serial)
  );
}

function exportAs(c: CertificateModel, type: unknown): Buffer {
  const kind = enumValue(type, X509ContentTypeEnum);
  if (kind === X509ContentTypeEnum.members.Cert) return Buffer.from(certificateFields(c).node.raw);
  if (
    kind === null ||
    kind === X509ContentTypeEnum.members.Unknown ||
    kind === X509ContentTypeEnum.members.Authenticode
  ) {
    throw new CsException('CryptographicException', 'Invalid content type.');
  }
  // PFX and PKCS#7 need encoders Node does not have, and the serialized forms are Windows certificate-store blobs.
  throw new CsException(
    'NotSupportedException',
    `Export(X509ContentType.${X509ContentTypeEnum.names.get(kind)}) is not supported in policy expressions here; export X509ContentType.Cert`,
  );
}

/** X509Certificate.ToString(true), line for line as dotnet/runtime writes it ("\n" ends lines, as AppendLine here). */
function summary(rt: Rt, c: CertificateModel): string {
  const section = (title: string, value: string) => `[${title}]\n  ${value}\n`;
  return [
    section('Subject', c.subject),
    section('Issuer', c.issuer),
    section('Serial Number', hex(certificateFields(c).serial)),
    section('Not Before', localDateString(rt, c.notBefore)),
    section('Not After', localDateString(rt, c.notAfter)),
    section('Thumbprint', thumbprintOf(certificateFields(c).node)),
  ].join('\n');
}

export const X509CertificateType = defineType({
  name: 'X509Certificate',
  namespace: NAMESPACE,
  classes: [BaseCertificate],
  test: (v) => v instanceof CertificateModel,
  construct: (_rt, args) => new BaseCertificate(certificateFromBytes(bytes(args[0], 'data'), args[1])),
  props: {
    Subject: prop((c: CertificateModel) => c.subject),
    Issuer: prop((c: CertificateModel) => c.issuer),
  },
  methods: {
    GetCertHash: (_rt, c: CertificateModel, args) => certHash(c, args),
    GetCertHashString: (_rt, c: CertificateModel, args) => hex(certHash(c, args)),
    GetSerialNumber: (_rt, c: CertificateModel) => Buffer.from(certificateFields(c).serial).reverse(),
    GetSerialNumberString: (_rt, c: CertificateModel) => hex(certificateFields(c).serial),
    GetRawCertData: (_rt, c: CertificateModel) => Buffer.from(certificateFields(c).node.raw),
    GetRawCertDataString: (_rt, c: CertificateModel) => hex(certificateFields(c).node.raw),
    GetPublicKey: (_rt, c: CertificateModel) => Buffer.from(certificateFields(c).publicKey),
    GetPublicKeyString: (_rt, c: CertificateModel) => hex(certificateFields(c).publicKey),
    GetKeyAlgorithm: (_rt, c: CertificateModel) => certificateFields(c).keyAlgorithm,
    GetKeyAlgorithmParameters: (_rt, c: CertificateModel) => Buffer.from(certificateFields(c).keyParameters),
    GetKeyAlgorithmParametersString: (_rt, c: CertificateModel) => hex(certificateFields(c).keyParameters),
    GetFormat: () => 'X509',
    // .NET prints these in the machine's local time, which is UTC on the gateway.
    GetEffectiveDateString: (rt, c: CertificateModel) => localDateString(rt, c.notBefore),
    GetExpirationDateString: (rt, c: CertificateModel) => localDateString(rt, c.notAfter),
    Export: (_rt, c: CertificateModel, args) => exportAs(c, args[0]),
    Equals: (_rt, c: CertificateModel, args) => sameCertificate(c, args[0]),
    /** .NET's: the first four bytes of the SHA-1 thumbprint, big-endian. */
    GetHashCode: (_rt, c: CertificateModel) =>
      Number.parseInt(thumbprintOf(certificateFields(c).node).slice(0, 8), 16) | 0,
    /** ToString() is the type's name; ToString(true) the summary (X509Certificate2's ToString() is the summary). */
    ToString: (rt, c: CertificateModel, args) =>
      args[0] === true ? summary(rt, c) : 'System.Security.Cryptography.X509Certificates.X509Certificate',
    Dispose: () => null,
    Reset: () => null,
  },
});

/** X509Certificate2, read-only: what policies use of a client certificate, or of one built from its bytes. */
export const CertificateType = defineType({
  name: 'X509Certificate2',
  namespace: NAMESPACE,
  base: X509CertificateType,
  classes: [CertificateModel],
  test: (v) => v instanceof CertificateModel && !(v instanceof BaseCertificate),
  // new X509Certificate2(X509Certificate) copies a certificate; otherwise the argument is its bytes.
  construct: (_rt, args) =>
    args[0] instanceof CertificateModel
      ? new CertificateModel(args[0])
      : certificateFromBytes(bytes(args[0], 'rawData'), args[1]),
  props: {
    Thumbprint: prop((c: CertificateModel) => c.thumbprint),
    SerialNumber: prop((c: CertificateModel) => c.serialNumber),
    NotBefore: prop((c: CertificateModel) => CsDateTime.fromDate(c.notBefore)),
    NotAfter: prop((c: CertificateModel) => CsDateTime.fromDate(c.notAfter)),
    RawData: prop((c: CertificateModel) => Buffer.from(c.raw)),
    FriendlyName: prop(() => ''),
    HasPrivateKey: prop((c: CertificateModel) => PRIVATE_KEYS.has(c)),
    /** Obsolete since .NET 6 (GetRSAPrivateKey replaces it), still answered: the key, or null. */
    PrivateKey: prop((c: CertificateModel) => {
      const key = PRIVATE_KEYS.get(c);
      return key ? new CsRsa(key) : null;
    }),
    PublicKey: prop((c: CertificateModel) => new CsPublicKey(certificateFields(c).spki)),
    SubjectName: prop((c: CertificateModel) => new DistinguishedName(c.subject)),
    IssuerName: prop((c: CertificateModel) => new DistinguishedName(c.issuer)),
    Version: prop((c: CertificateModel) => certificateFields(c).version),
    SignatureAlgorithm: prop((c: CertificateModel) => oidOf(certificateFields(c).signatureAlgorithm)),
  },
  methods: {
    ToString: (rt, c: CertificateModel, args) => {
      if (args[0] !== true) return summary(rt, c);
      // The verbose form lists the extensions as the operating system's formatter words them (CryptFormatObject on
      // Windows), which cannot be reproduced faithfully.
      throw new CsException(
        'NotSupportedException',
        'X509Certificate2.ToString(true) is not supported in policy expressions here; ToString() gives the summary',
      );
    },
    /** Chain to a trusted authority and not revoked, as the gateway checked it. */
    Verify: (_rt, c: CertificateModel) => c.trusted && c.revoked !== true,
    GetNameInfo: (_rt, c: CertificateModel, args) => {
      arity('GetNameInfo', args, 2);
      const nameType = enumValue(args[0], X509NameTypeEnum);
      if (nameType === null) throw new CsException('ArgumentException', 'The value of nameType is invalid.');
      return nameInfo(c, nameType, bool(args[1], 'forIssuer'));
    },
  },
  staticMethods: {
    CreateFromPem: (_rt, _s, args) =>
      certificateFromPem(str(args[0], 'certPem'), args.length > 1 ? str(args[1], 'keyPem') : null),
    GetCertContentType: (_rt, _s, args) =>
      X509ContentTypeEnum.values.get(contentType(bytes(args[0], 'rawData'))),
  },
});
