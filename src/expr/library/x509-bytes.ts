/**
 * `new X509Certificate2(byte[])`: a certificate an expression builds from its DER (or PEM) bytes — typically
 * `new X509Certificate2(Convert.FromBase64String(header))` for a certificate a client forwards in a header.
 * https://learn.microsoft.com/dotnet/api/system.security.cryptography.x509certificates.x509certificate2.-ctor
 */
import { createHash, X509Certificate } from 'node:crypto';
import { CertificateModel } from '../context.js';
import { CsException } from '../runtime/core.js';

const cryptographic = (message: string): CsException => new CsException('CryptographicException', message);

/** Node prints a name one RDN per line, least specific first; .NET's Name is most specific first, ", "-separated. */
const dotNetName = (name: string): string =>
  name
    .split('\n')
    .filter((line) => line !== '')
    .reverse()
    .join(', ');

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
  const subjectLines = certificate.subject.split('\n');
  return new CertificateModel({
    pem: certificate.toString(),
    raw: certificate.raw,
    thumbprint: createHash('sha1').update(certificate.raw).digest('hex').toUpperCase(),
    serialNumber: certificate.serialNumber.toUpperCase(),
    subject: dotNetName(certificate.subject),
    issuer: dotNetName(certificate.issuer),
    commonName:
      subjectLines
        .reverse()
        .find((line) => line.startsWith('CN='))
        ?.slice(3) ?? null,
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
