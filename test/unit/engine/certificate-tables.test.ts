import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CertificatesUsed } from '../../../src/config/gateway.js';
import { type LoadedConfig, loadConfigText } from '../../../src/config/load.js';
import { certificateTables } from '../../../src/engine/certificates.js';
import { clientCertificate } from '../../../src/engine/client-certificate.js';
import {
  type CertificateAuthority,
  type CertificateWorkshop,
  certificateWorkshop,
} from '../../processes/certificates.js';

const NONE: CertificatesUsed = { ids: new Set(), all: false };

describe('certificate tables the engine reads at start', () => {
  let workshop: CertificateWorkshop;
  let clients: CertificateAuthority;
  let partners: CertificateAuthority;

  beforeAll(async () => {
    workshop = await certificateWorkshop();
    clients = await workshop.authority('clients', '/CN=Clients');
    partners = await workshop.authority('partners', '/CN=Partners');
    await partners.issue({ name: 'partner', subject: '/CN=partner', usage: 'client' });
    await writeFile(path.join(workshop.directory, 'garbage.pem'), 'not a certificate\n');
  });
  afterAll(() => workshop.remove());

  /** The configuration `text`, as if in the workshop's folder (its certificates beside it). */
  const load = (text: string): Promise<LoadedConfig> => {
    const file = path.join(workshop.directory, 'gateway.yaml');
    return loadConfigText(text, file, new Map([[file, text]]));
  };
  const config = () =>
    load(`
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
`);

  it('trusts the client CA file and the store, naming store certificates by id', async () => {
    const { trust: store } = await certificateTables(await config(), { certificatesUsed: NONE });
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
    const { backendCertificates: table } = await certificateTables(await config(), {
      certificatesUsed: NONE,
    });
    expect(table.presented({ backendId: 'billing' })).toEqual({
      id: 'partner',
      thumbprint: expect.stringMatching(/^[0-9A-F]{40}$/),
    });
    expect(table.presented({ apiId: 'courses' })).toBeUndefined();
  });

  describe('reads only the certificates a backend or a policy can use', () => {
    const store = () =>
      load(`
apis: [{ id: courses, urlSuffix: courses, serviceUrl: "https://10.0.0.4" }]
tls:
  certificates:
    partner: { certificate: partner.pem, key: partner.key }
    gone: { certificate: nowhere.pem, key: nowhere.key }
    garbage: { certificate: garbage.pem, key: partner.key }
`);

    it('leaves the others unread, however broken their files', async () => {
      const { certificateKeys, trust } = await certificateTables(await store(), {
        certificatesUsed: { ids: new Set(['partner']), all: false },
      });
      expect(certificateKeys.clientCertificate({ id: 'partner' })).toMatchObject({
        poolKey: 'store:partner',
      });
      expect(certificateKeys.privateKey('partner')).toBeDefined();
      expect(certificateKeys.clientCertificate({ id: 'gone' })).toBeUndefined();
      // No client certificates asked for: the store names no issuer.
      expect(trust.authorities).toEqual([]);
    });

    it('refuses the load, at the key in the configuration file, for a used certificate that cannot be read', async () => {
      const loaded = await store();
      await expect(
        certificateTables(loaded, { certificatesUsed: { ids: new Set(['gone']), all: false } }),
      ).rejects.toThrow(
        /gateway\.yaml:6:\d+: tls\.certificates\.gone\.certificate: certificate file "nowhere\.pem" cannot be read \(.*\): ENOENT/,
      );
      // A thumbprint, or an id an expression computes, can name any of them: each must be readable.
      await expect(
        certificateTables(loaded, { certificatesUsed: { ids: new Set(), all: true } }),
      ).rejects.toThrow(
        /gateway\.yaml:7:\d+: tls\.certificates\.garbage\.certificate: "garbage\.pem" holds no certificate/,
      );
    });
  });
});
