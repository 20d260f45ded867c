import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { backendCertificateTable, clientTrustStore } from '../../../src/engine/certificates.js';
import { clientCertificate } from '../../../src/engine/client-certificate.js';
import {
  type CertificateAuthority,
  type CertificateWorkshop,
  certificateWorkshop,
} from '../../processes/certificates.js';

describe('certificate tables the engine reads at start', () => {
  let workshop: CertificateWorkshop;
  let clients: CertificateAuthority;
  let partners: CertificateAuthority;

  beforeAll(async () => {
    workshop = await certificateWorkshop();
    clients = await workshop.authority('clients', '/CN=Clients');
    partners = await workshop.authority('partners', '/CN=Partners');
    await partners.issue({ name: 'partner', subject: '/CN=partner', usage: 'client' });
  });
  afterAll(() => workshop.remove());

  const config = () =>
    parseConfig(
      `
apis: [{ id: courses, urlSuffix: courses, serviceUrl: "https://10.0.0.4" }]
backends: [{ id: billing, url: "https://10.0.0.5" }]
tls:
  certificate: x.pem
  key: x.key
  clientCertificates: { trustedCa: clients.pem }
  certificates:
    partner-ca: { certificate: partners.pem, key: partners.key }
    partner: { certificate: partner.pem, key: partner.key }
  backends: { billing: { certificateId: partner } }
`,
      'gateway.yaml',
    );

  it('trusts the client CA file and the store, naming store certificates by id', async () => {
    const store = await clientTrustStore(config(), workshop.directory);
    expect(store.authorities.map((authority) => authority.id)).toEqual([null, 'partner-ca', 'partner']);
    const read = (pem: string) =>
      clientCertificate(
        new Map<string, string | boolean>([
          ['connection.mtls', true],
          ['connection.peer_certificate', encodeURIComponent(pem)],
        ]),
        store,
      )!;
    const fromPartnerCa = await partners.issue({ name: 'someone', subject: '/CN=someone', usage: 'client' });
    expect(read(fromPartnerCa.pem).issuerCertificateId).toBe('partner-ca');
    const fromClients = await clients.issue({ name: 'client', subject: '/CN=client', usage: 'client' });
    expect(read(fromClients.pem)).toMatchObject({ trusted: true, issuerCertificateId: null });
  });

  it('says which certificate each backend is given, by backend or API id', async () => {
    const table = await backendCertificateTable(config(), workshop.directory);
    expect(table.presented({ backendId: 'billing' })).toEqual({
      id: 'partner',
      thumbprint: expect.stringMatching(/^[0-9A-F]{40}$/),
    });
    expect(table.presented({ apiId: 'courses' })).toBeUndefined();
  });
});
