/**
 * `new X509Certificate2(byte[])`: a certificate an expression builds from its DER (or PEM) bytes — typically
 * `new X509Certificate2(Convert.FromBase64String(header))` for a certificate a client forwards in a header — and
 * the other ways in: X509Certificate2.CreateFromPem, GetCertContentType, and names as .NET writes them.
 * https://learn.microsoft.com/dotnet/api/system.security.cryptography.x509certificates.x509certificate2.-ctor
 */
import { createPrivateKey, createPublicKey, type KeyObject, X509Certificate } from 'node:crypto';
import { thumbprintOf } from '../../certificate-thumbprint.js';
import { CertificateModel } from '../context.js';
import { CsException } from '../runtime/core.js';
import { pemBlocks } from './pem.js';
import { certificateFields, PRIVATE_KEYS } from './x509-fields.js';

const cryptographic = (message: string): CsException => new CsException('CryptographicException', message);

/** OpenSSL's short names (as Node prints them) → the names .NET's X500DistinguishedName.Name writes. */
const DOTNET_KEYS: Readonly<Record<string, string>> = {
  ST: 'S',
  emailAddress: 'E',
  street: 'STREET',
  title: 'T',
  GN: 'G',
  initials: 'I',
  serialNumber: 'SERIALNUMBER',
  postalCode: 'PostalCode',
  description: 'Description',
  postOfficeBox: 'POBox',
  telephoneNumber: 'Phone',
  UID: 'OID.0.9.2342.19200300.100.1.1',
};

/** A value Node printed with RFC 2253 escapes (`a\, b`), unescaped. */
const unescapeRfc2253 = (value: string): string =>
  value.replace(/\\([0-9A-Fa-f]{2}|.)/g, (_m, c: string) =>
    c.length === 2 ? String.fromCharCode(Number.parseInt(c, 16)) : c,
  );

/**
 * The attributes of a name Node printed (one RDN per line, least specific first), most specific first as .NET
 * reads them, with .NET's attribute names and the values unescaped.
 */
export function nameAttributes(nodeName: string): Array<[string, string]> {
  return nodeName
    .split('\n')
    .filter((line) => line !== '')
    .reverse()
    .map((line) => {
      const at = line.indexOf('=');
      const key = line.slice(0, at);
      const name = DOTNET_KEYS[key] ?? (/^\d+(\.\d+)+$/.test(key) ? `OID.${key}` : key);
      return [name, unescapeRfc2253(line.slice(at + 1))];
    });
}

/** .NET quotes a value holding a separator, a quote or outer spaces, and doubles the quotes inside. */
const quoted = (value: string): string =>
  /[,+="\n<>#;]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;

/** X500DistinguishedName.Name (and Subject, Issuer) as .NET writes it: most specific first, ", "-separated. */
export function dotNetName(nodeName: string): string {
  return nameAttributes(nodeName)
    .map(([key, value]) => `${key}=${quoted(value)}`)
    .join(', ');
}

/**
 * The certificate in `raw`. A password argument means PKCS#12 (a .pfx with a private key), which Node cannot
 * read: refused with the reason rather than read wrongly. The certificate is not chained to anything here, so
 * `Verify()` is false, as .NET's is for a certificate whose chain the machine cannot build.
 */
export function certificateFromBytes(raw: Buffer, password: unknown): CertificateModel {
  if (password !== undefined) {
    throw cryptographic('PKCS#12 (a certificate with a password) cannot be read in policy expressions here');
  }
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(raw);
  } catch {
    throw cryptographic('Cannot find the requested object. (the bytes are not a DER or PEM certificate)');
  }
  return new CertificateModel({
    pem: certificate.toString(),
    raw: certificate.raw,
    thumbprint: thumbprintOf(certificate),
    serialNumber: certificate.serialNumber.toUpperCase(),
    subject: dotNetName(certificate.subject),
    issuer: dotNetName(certificate.issuer),
    commonName: nameAttributes(certificate.subject).find(([key]) => key === 'CN')?.[1] ?? null,
    dnsNames: (certificate.subjectAltName ?? '')
      .split(/,\s*/)
      .filter((entry) => entry.startsWith('DNS:'))
      .map((entry) => entry.slice(4)),
    notBefore: new Date(certificate.validFrom),
    notAfter: new Date(certificate.validTo),
    trusted: false,
    issuerThumbprint: null,
    issuerCertificateId: null,
    revoked: undefined,
  });
}

/**
 * X509Certificate2.CreateFromPem(certPem[, keyPem]): the first CERTIFICATE block, and with keyPem the first private
 * key whose label the certificate's algorithm accepts ("PRIVATE KEY", or "RSA PRIVATE KEY" / "EC PRIVATE KEY"),
 * which must match the certificate's public key.
 */
export function certificateFromPem(certPem: string, keyPem: string | null): CertificateModel {
  const block = pemBlocks(certPem, ['CERTIFICATE'])[0]?.text ?? null;
  if (block === null)
    throw new CsException(
      'CryptographicException',
      'The contents do not contain a PEM with a CERTIFICATE label, or the content is malformed.',
    );
  const certificate = certificateFromBytes(Buffer.from(block), undefined);
  if (keyPem === null) return certificate;
  const rsa = certificateFields(certificate).keyAlgorithm === '1.2.840.113549.1.1.1';
  const keyBlock =
    pemBlocks(keyPem, ['PRIVATE KEY', rsa ? 'RSA PRIVATE KEY' : 'EC PRIVATE KEY'])[0]?.text ?? null;
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

/** What GetCertContentType sees in the bytes: a certificate, a PFX (version 3, then data), PKCS#7 signed data. */
export function contentType(raw: Buffer): string {
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
