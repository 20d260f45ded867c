import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure, makeContext, show } from '../../doubles/policy-context.js';
import { type CertificateWorkshop, certificateWorkshop, type Issued } from '../../processes/certificates.js';

// new X509Certificate2(byte[]): allowed by the expression types table (X509Certificate2: All).
describe('new X509Certificate2(byte[])', () => {
  let workshop: CertificateWorkshop;
  let leaf: Issued;
  let der: string;

  beforeAll(async () => {
    workshop = await certificateWorkshop();
    leaf = await workshop.selfSigned({
      name: 'leaf',
      subject: '/C=NL/O=Portcullis Test/CN=client.example',
      dns: ['client.example'],
      usage: 'client',
    });
    der = leaf.pem.replace(/-----[A-Z ]+-----|\s/g, '');
  });
  afterAll(() => workshop.remove());

  const read = (member: string): string =>
    show(`new X509Certificate2(Convert.FromBase64String("${der}")).${member}`, makeContext());

  it('reads a DER certificate from bytes: subject and issuer as .NET prints them, thumbprint, validity', () => {
    expect(read('Subject')).toBe('CN=client.example, O=Portcullis Test, C=NL');
    expect(read('Issuer')).toBe('CN=client.example, O=Portcullis Test, C=NL');
    expect(read('Thumbprint')).toMatch(/^[0-9A-F]{40}$/);
    expect(read('NotAfter > DateTime.UtcNow')).toBe('True');
    expect(read('RawData.Length')).toBe(String(Buffer.from(der, 'base64').length));
  });

  it('is not verified: no chain is built for a certificate an expression made', () => {
    expect(read('Verify()')).toBe('False');
  });

  it('reads PEM bytes too', () => {
    const pem = JSON.stringify(leaf.pem);
    expect(show(`new X509Certificate2(Encoding.ASCII.GetBytes(${pem})).Subject`)).toContain(
      'CN=client.example',
    );
  });

  it.each([
    ['new X509Certificate2(new byte[] { 1, 2, 3 })', 'CryptographicException'],
    ['new X509Certificate2(new byte[] { 1, 2, 3 }, "password")', 'PKCS#12'],
    ['new X509Certificate2(null)', 'ArgumentNullException'],
  ])('%s fails with %s', (expr, expected) => {
    expect(failure(expr)).toContain(expected);
  });
});
