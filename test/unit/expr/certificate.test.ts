import { describe, expect, it } from 'vitest';
import { CertificateModel, RequestModel } from '../../../src/expr/index.js';
import { makeContext, show } from '../../doubles/policy-context.js';

/** context.Request.Certificate as the X509Certificate2 real policies read. */
describe('context.Request.Certificate', () => {
  const description = {
    pem: '-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----\n',
    raw: Buffer.from([0x30, 0x82, 0x01]),
    thumbprint: 'A1B2C3D4E5F60718293A4B5C6D7E8F9012345678',
    serialNumber: '0F1E',
    subject: 'CN=client.example, O=Example',
    issuer: 'CN=Client CA',
    commonName: 'client.example',
    dnsNames: [],
    notBefore: new Date('2026-01-01T00:00:00Z'),
    notAfter: new Date('2027-01-01T00:00:00Z'),
    trusted: true,
    issuerThumbprint: 'FFEE',
    issuerCertificateId: 'client-ca',
    revoked: undefined,
  };

  const withCertificate = (certificate: unknown) => {
    const ctx = makeContext();
    ctx.request = new RequestModel({ method: 'GET', url: 'https://gw/x', certificate });
    return ctx;
  };

  it.each([
    ['context.Request.Certificate.Thumbprint', 'A1B2C3D4E5F60718293A4B5C6D7E8F9012345678'],
    ['context.Request.Certificate.Subject', 'CN=client.example, O=Example'],
    ['context.Request.Certificate.Issuer', 'CN=Client CA'],
    ['context.Request.Certificate.SerialNumber', '0F1E'],
    ['context.Request.Certificate.NotAfter.ToString("yyyy-MM-dd")', '2027-01-01'],
    ['context.Request.Certificate.NotBefore < DateTime.UtcNow', 'True'],
    ['context.Request.Certificate.RawData.Length', '3'],
    ['context.Request.Certificate.Verify()', 'True'],
    ['context.Request.Certificate != null', 'True'],
  ])('%s', (expression, expected) => {
    expect(show(expression, withCertificate(description))).toBe(expected);
  });

  it('is null without a certificate, and an unknown shape is no certificate', () => {
    expect(show('context.Request.Certificate == null', withCertificate(null))).toBe('True');
    expect(show('context.Request.Certificate == null', withCertificate({ subject: 'forged' }))).toBe('True');
  });

  it('fails Verify() for an untrusted or revoked certificate', () => {
    expect(
      show('context.Request.Certificate.Verify()', withCertificate({ ...description, trusted: false })),
    ).toBe('False');
    expect(
      show('context.Request.Certificate.Verify()', withCertificate({ ...description, revoked: true })),
    ).toBe('False');
    expect(CertificateModel.from(description)?.thumbprint).toBe(description.thumbprint);
  });
});
