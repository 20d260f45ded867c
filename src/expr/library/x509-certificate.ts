/**
 * System.Security.Cryptography.X509Certificates: X509Certificate and X509Certificate2 (read-only: the client
 * certificate of a request, or one an expression builds from its bytes), X500DistinguishedName, and the enums
 * X509ContentType and X509NameType. PublicKey and RSACertificateExtensions are in public-key.ts.
 * https://learn.microsoft.com/dotnet/api/system.security.cryptography.x509certificates.x509certificate2
 *
 * Not offered: CreateFromCertFile and CreateFromSignedFile (expressions have no file system), Handle (a native
 * pointer), Import (.NET throws PlatformNotSupportedException: certificates are immutable), and the verbose
 * ToString(true) text of the Windows certificate dialog.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
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
import { certificateFromBytes, nameAttributes } from './x509-bytes.js';
import { CsPublicKey, certificateFields, PRIVATE_KEYS } from './x509-fields.js';

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

export const X509NameTypeEnum = makeEnum('X509NameType', {
  SimpleName: 0,
  EmailName: 1,
  UpnName: 2,
  DnsName: 3,
  DnsFromAlternativeName: 4,
  UrlName: 5,
});
defineEnumType(X509NameTypeEnum, NAMESPACE);

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
    section('Thumbprint', hex(createHash('sha1').update(certificateFields(c).node.raw).digest())),
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
      createHash('sha1').update(certificateFields(c).node.raw).digest().readInt32BE(0),
    /** ToString() is the type's name; ToString(true) the summary (X509Certificate2's ToString() is the summary). */
    ToString: (rt, c: CertificateModel, args) =>
      args[0] === true ? summary(rt, c) : 'System.Security.Cryptography.X509Certificates.X509Certificate',
    Dispose: () => null,
    Reset: () => null,
  },
});

// ---- X509Certificate2.GetNameInfo ----

/**
 * Node's subjectAltName text (`DNS:a.example, email:x@example`), values JSON-quoted when they hold a comma. Read
 * in one pass: the text comes from a certificate an expression may have built.
 */
function altNames(text: string | undefined): Array<[string, string]> {
  const s = text ?? '';
  const out: Array<[string, string]> = [];
  for (let at = 0; at < s.length; ) {
    const colon = s.indexOf(':', at);
    if (colon < 0) break;
    let end: number;
    let value: string;
    if (s[colon + 1] === '"') {
      end = colon + 2;
      while (end < s.length && s[end] !== '"') end += s[end] === '\\' ? 2 : 1;
      end = Math.min(end + 1, s.length);
      try {
        value = JSON.parse(s.slice(colon + 1, end)) as string;
      } catch {
        value = s.slice(colon + 1, end);
      }
    } else {
      const comma = s.indexOf(',', colon);
      end = comma < 0 ? s.length : comma;
      value = s.slice(colon + 1, end);
    }
    out.push([s.slice(at, colon).trim(), value]);
    const next = s.indexOf(',', end);
    if (next < 0) break;
    at = next + 1;
  }
  return out;
}

/**
 * .NET's SimpleName: the most specific CN; else OU, O or e-mail in that order of preference — the least specific
 * of each, as .NET keeps overwriting it while it reads — else the most specific attribute.
 */
function simpleName(attrs: Array<[string, string]>): string | null {
  const cn = attrs.find(([k]) => k === 'CN');
  if (cn) return cn[1];
  const pick = (key: string) => attrs.findLast(([k]) => k === key)?.[1];
  return pick('OU') ?? pick('O') ?? pick('E') ?? attrs[0]?.[1] ?? null;
}

/**
 * GetNameInfo(nameType, forIssuer) as .NET reads a certificate: the alternative name of the kind asked for, else the
 * name's attribute (CN for DnsName, the e-mail attribute for EmailName), else "". Node exposes the subject's
 * alternative names only: for the issuer the name's attributes are read.
 */
function nameInfo(c: CertificateModel, nameType: number, forIssuer: boolean): string {
  const fields = certificateFields(c);
  const attrs = nameAttributes(forIssuer ? fields.node.issuer : fields.node.subject);
  const types = X509NameTypeEnum.members;
  if (nameType === types.SimpleName) {
    const simple = simpleName(attrs);
    if (simple !== null) return simple;
  }
  const alt = forIssuer ? [] : altNames(fields.node.subjectAltName);
  const altKind: Record<number, (k: string, v: string) => boolean> = {
    [types.SimpleName]: (k) => k === 'email',
    [types.EmailName]: (k) => k === 'email',
    [types.UpnName]: (k, v) => k === 'othername' && /^UPN:/.test(v),
    [types.DnsName]: (k) => k === 'DNS',
    [types.DnsFromAlternativeName]: (k) => k === 'DNS',
    [types.UrlName]: (k) => k === 'URI',
  };
  const match = alt.find(([k, v]) => altKind[nameType]?.(k, v));
  if (match) return nameType === types.UpnName ? match[1].replace(/^UPN::?/, '') : match[1];
  if (nameType === types.EmailName) return attrs.find(([k]) => k === 'E')?.[1] ?? '';
  if (nameType === types.DnsName) return attrs.find(([k]) => k === 'CN')?.[1] ?? '';
  return '';
}

/**
 * X509Certificate2.CreateFromPem(certPem[, keyPem]): the first CERTIFICATE block, and with keyPem the first private
 * key whose label the certificate's algorithm accepts ("PRIVATE KEY", or "RSA PRIVATE KEY" / "EC PRIVATE KEY"),
 * which must match the certificate's public key.
 */
function certificateFromPem(certPem: string, keyPem: string | null): CertificateModel {
  const block = pemBlock(certPem, 'CERTIFICATE');
  if (block === null)
    throw new CsException(
      'CryptographicException',
      'The contents do not contain a PEM with a CERTIFICATE label, or the content is malformed.',
    );
  const certificate = certificateFromBytes(Buffer.from(block), undefined);
  if (keyPem === null) return certificate;
  const rsa = certificateFields(certificate).keyAlgorithm === '1.2.840.113549.1.1.1';
  const keyBlock =
    pemBlock(keyPem, 'PRIVATE KEY') ?? pemBlock(keyPem, rsa ? 'RSA PRIVATE KEY' : 'EC PRIVATE KEY');
  if (keyBlock === null)
    throw new CsException(
      'CryptographicException',
      'The key contents do not contain a PEM, the content is malformed, or the key does not match the certificate.',
    );
  let key: KeyObject;
  try {
    key = createPrivateKey(keyBlock);
  } catch {
    throw new CsException(
      'CryptographicException',
      'The key contents do not contain a PEM, the content is malformed, or the key does not match the certificate.',
    );
  }
  if (
    !createPublicKey(key).export({ format: 'der', type: 'spki' }).equals(certificateFields(certificate).spki)
  ) {
    throw new CsException(
      'CryptographicException',
      'The key contents do not contain a PEM, the content is malformed, or the key does not match the certificate.',
    );
  }
  PRIVATE_KEYS.set(certificate, key);
  return certificate;
}

/** The first PEM block labelled `label`, whole, found with indexOf (one pass). */
function pemBlock(text: string, label: string): string | null {
  const begin = `-----BEGIN ${label}-----`;
  const end = `-----END ${label}-----`;
  const at = text.indexOf(begin);
  if (at < 0) return null;
  const close = text.indexOf(end, at + begin.length);
  return close < 0 ? null : text.slice(at, close + end.length);
}

/** What GetCertContentType sees in the bytes: a certificate, a PFX (version 3, then data), PKCS#7 signed data. */
function contentType(raw: Buffer): string {
  try {
    certificateFromBytes(raw, undefined);
    return 'Cert';
  } catch {
    const head = raw.subarray(0, 32).toString('hex');
    const sequence = '30(?:[0-7][0-9a-f]|81[0-9a-f]{2}|82[0-9a-f]{4}|83[0-9a-f]{6}|84[0-9a-f]{8})';
    if (new RegExp(`^${sequence}020103`).test(head)) return 'Pfx';
    if (new RegExp(`^${sequence}06092a864886f70d010702`).test(head)) return 'Pkcs7';
    return 'Unknown';
  }
}

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
