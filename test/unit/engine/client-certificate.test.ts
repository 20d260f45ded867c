import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCertificate, trustStore } from '../../../src/engine/client-certificate.js';
import type { AttributeValue } from '../../../src/extproc/headers.js';
import {
  type CertificateAuthority,
  type CertificateWorkshop,
  certificateWorkshop,
  type Issued,
} from '../../processes/certificates.js';

/** The attributes as Envoy sends them for a mutual-TLS connection: the PEM URL-encoded. */
function attributes(pem: string | undefined, mtls = true): Map<string, AttributeValue> {
  const values = new Map<string, AttributeValue>([['connection.mtls', mtls]]);
  if (pem !== undefined) values.set('connection.peer_certificate', encodeURIComponent(pem));
  return values;
}

describe('clientCertificate (ext_proc attributes → context.Request.Certificate)', () => {
  let workshop: CertificateWorkshop;
  let ca: CertificateAuthority;
  let client: Issued;
  let stranger: Issued;

  beforeAll(async () => {
    workshop = await certificateWorkshop();
    ca = await workshop.authority('ca', '/C=NL/O=Portcullis Test/CN=Test Client CA');
    client = await ca.issue({
      name: 'client',
      subject: '/C=NL/O=Example/CN=client.example',
      dns: ['client.example', 'alt.example'],
      serial: '0x00A1B2C3',
      usage: 'client',
    });
    stranger = await workshop.selfSigned({ name: 'stranger', subject: '/CN=stranger', usage: 'client' });
  });
  afterAll(() => workshop.remove());

  it('reads the certificate of a mutual-TLS connection with the X509Certificate2 fields', async () => {
    const trust = trustStore([{ pem: ca.pem }]);
    const certificate = clientCertificate(attributes(client.pem), trust)!;
    expect(certificate.subject).toBe('CN=client.example, O=Example, C=NL');
    expect(certificate.issuer).toBe('CN=Test Client CA, O=Portcullis Test, C=NL');
    expect(certificate.commonName).toBe('client.example');
    expect(certificate.dnsNames).toEqual(['client.example', 'alt.example']);
    expect(certificate.serialNumber).toBe('A1B2C3');
    expect(certificate.thumbprint).toMatch(/^[0-9A-F]{40}$/);
    expect(certificate.pem).toBe(client.pem);
    expect(certificate.notAfter.getTime()).toBeGreaterThan(certificate.notBefore.getTime());
    expect(certificate.trusted).toBe(true);
    const caDer = (await import('node:crypto')).createHash('sha1');
    const { X509Certificate } = await import('node:crypto');
    expect(certificate.issuerThumbprint).toBe(
      caDer
        .update(new X509Certificate(await readFile(ca.certificateFile)).raw)
        .digest('hex')
        .toUpperCase(),
    );
    expect(certificate.revoked).toBeUndefined();
  });

  it('is null without mutual TLS, without a certificate, or with an unreadable one', () => {
    expect(clientCertificate(attributes(client.pem, false))).toBeNull();
    expect(clientCertificate(attributes(undefined))).toBeNull();
    expect(clientCertificate(new Map())).toBeNull();
    expect(
      clientCertificate(
        attributes('-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----'),
      ),
    ).toBeNull();
  });

  it('trusts only certificates a trusted authority signed, and names that authority by its store id', () => {
    const anonymous = clientCertificate(attributes(client.pem))!;
    expect(anonymous.trusted).toBe(false);
    expect(anonymous.issuerThumbprint).toBeNull();
    const byId = clientCertificate(attributes(client.pem), trustStore([{ pem: ca.pem, id: 'partner-ca' }]))!;
    expect(byId.issuerCertificateId).toBe('partner-ca');
    const selfSigned = clientCertificate(attributes(stranger.pem), trustStore([{ pem: ca.pem }]))!;
    expect(selfSigned.trusted).toBe(false);
    // A self-signed certificate whose subject and issuer equal a trusted CA's would still fail the signature check.
    expect(selfSigned.issuerCertificateId).toBeNull();
  });

  it('reports revocation only for an issuer whose list is known', () => {
    const trusted = trustStore([{ pem: ca.pem }]);
    const issuer = clientCertificate(attributes(client.pem), trusted)!.issuerThumbprint!;
    const revoking = trustStore([{ pem: ca.pem }], new Map([[issuer, new Set(['A1B2C3'])]]));
    expect(clientCertificate(attributes(client.pem), revoking)!.revoked).toBe(true);
    const otherList = trustStore([{ pem: ca.pem }], new Map([[issuer, new Set(['FF'])]]));
    expect(clientCertificate(attributes(client.pem), otherList)!.revoked).toBe(false);
  });
});
