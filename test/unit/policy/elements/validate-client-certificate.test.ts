import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCertificate, trustStore } from '../../../../src/engine/client-certificate.js';
import type { ClientCertificate } from '../../../../src/policy/elements/validate-client-certificate.js';
import { PipelineRun } from '../../../../src/policy/runner.js';
import { fakeServices, pipelineOf, policies, request } from '../../../doubles/policy-services.js';
import { type CertificateWorkshop, certificateWorkshop } from '../../../processes/certificates.js';

let workshop: CertificateWorkshop;
let trusted: ClientCertificate;
let untrusted: ClientCertificate;

beforeAll(async () => {
  workshop = await certificateWorkshop();
  const ca = await workshop.authority('ca', '/O=Portcullis Test/CN=Client CA');
  const client = await ca.issue({
    name: 'client',
    subject: '/O=Example/CN=client.example',
    dns: ['client.example'],
    serial: '0x0BEEF1',
    usage: 'client',
  });
  const stranger = await workshop.selfSigned({
    name: 'stranger',
    subject: '/CN=client.example',
    usage: 'client',
  });
  const store = trustStore([{ pem: ca.pem, id: 'client-ca' }]);
  const read = (pem: string) =>
    clientCertificate(
      new Map<string, string | boolean>([
        ['connection.mtls', true],
        ['connection.peer_certificate', encodeURIComponent(pem)],
      ]),
      store,
    )!;
  trusted = read(client.pem);
  untrusted = read(stranger.pem);
});
afterAll(() => workshop.remove());

/** Runs the policy as inbound with the connection's certificate; `at` is the clock (default: inside validity). */
async function check(policy: string, certificate: ClientCertificate | null, at?: number) {
  const services = fakeServices();
  services.now = at ?? (certificate ? certificate.notBefore.getTime() + 60_000 : Date.now());
  const run = new PipelineRun(pipelineOf(policies({ inbound: policy })), request(), services);
  run.run.context.request.certificate = certificate;
  const outcome = await run.onRequest();
  return {
    forwarded: outcome.kind === 'forward',
    status: outcome.kind === 'respond' ? outcome.response.status : undefined,
    reason: run.context.lastError?.reason,
    message: run.context.lastError?.message,
  };
}

const identity = (attributes: string) =>
  `<validate-client-certificate><identities><identity ${attributes} /></identities></validate-client-certificate>`;

describe('validate-client-certificate', () => {
  it('accepts a trusted certificate inside its validity period with the default rules', async () => {
    expect((await check('<validate-client-certificate />', trusted)).forwarded).toBe(true);
  });

  it('refuses a request without a client certificate (403, ClientCertificateMissing)', async () => {
    expect(await check('<validate-client-certificate />', null)).toMatchObject({
      forwarded: false,
      status: 403,
      reason: 'ClientCertificateMissing',
    });
  });

  it('checks each date rule against the clock, and skips it when switched off', async () => {
    const before = trusted.notBefore.getTime() - 60_000;
    const after = trusted.notAfter.getTime() + 60_000;
    expect((await check('<validate-client-certificate />', trusted, before)).reason).toBe(
      'ClientCertificateNotYetValid',
    );
    expect((await check('<validate-client-certificate />', trusted, after)).reason).toBe(
      'ClientCertificateExpired',
    );
    expect(
      (await check('<validate-client-certificate validate-not-before="false" />', trusted, before)).forwarded,
    ).toBe(true);
    expect(
      (await check('<validate-client-certificate validate-not-after="false" />', trusted, after)).forwarded,
    ).toBe(true);
  });

  it('refuses an untrusted chain unless validate-trust is false', async () => {
    expect(await check('<validate-client-certificate />', untrusted)).toMatchObject({
      status: 403,
      reason: 'ClientCertificateUntrusted',
    });
    expect((await check('<validate-client-certificate validate-trust="false" />', untrusted)).forwarded).toBe(
      true,
    );
  });

  it('refuses a revoked certificate unless validate-revocation is false', async () => {
    const revoked = { ...trusted, revoked: true };
    expect((await check('<validate-client-certificate />', revoked)).reason).toBe('ClientCertificateRevoked');
    expect(
      (await check('<validate-client-certificate validate-revocation="false" />', revoked)).forwarded,
    ).toBe(true);
  });

  it('continues despite a failure with ignore-error', async () => {
    expect((await check('<validate-client-certificate ignore-error="true" />', null)).forwarded).toBe(true);
  });

  const claims: [string, (c: ClientCertificate) => string, string][] = [
    ['thumbprint', (c) => c.thumbprint.toLowerCase(), '0000000000000000000000000000000000000000'],
    ['serial-number', () => '000BEEF1', '0BEEF2'],
    ['common-name', () => 'client.example', 'other.example'],
    ['subject', () => 'CN=client.example,O=Example', 'CN=client.example, O=Other'],
    ['dns-name', () => 'CLIENT.example', 'other.example'],
    ['issuer-subject', () => 'CN=Client CA, O=Portcullis Test', 'CN=Other CA'],
    ['issuer-thumbprint', (c) => c.issuerThumbprint!, 'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF'],
    ['issuer-certificate-id', () => 'client-ca', 'another-ca'],
  ];
  for (const [attribute, accepted, refused] of claims) {
    it(`accepts and refuses by ${attribute}`, async () => {
      expect((await check(identity(`${attribute}="${accepted(trusted)}"`), trusted)).forwarded).toBe(true);
      const failure = await check(identity(`${attribute}="${refused}"`), trusted);
      expect(failure).toMatchObject({ status: 403, reason: 'ClientCertificateIdentityMismatch' });
      expect(failure.message).toContain(trusted.thumbprint);
    });
  }

  it('needs every claim of one identity, and any one identity', async () => {
    const both = identity('common-name="client.example" dns-name="other.example"');
    expect((await check(both, trusted)).reason).toBe('ClientCertificateIdentityMismatch');
    const either = `<validate-client-certificate><identities>
        <identity common-name="nobody" />
        <identity common-name="client.example" dns-name="client.example" />
      </identities></validate-client-certificate>`;
    expect((await check(either, trusted)).forwarded).toBe(true);
  });

  it('rejects an identity without claims when the document is loaded', () => {
    expect(() => pipelineOf(policies({ inbound: identity('') }))).toThrow(/needs at least one of thumbprint/);
  });
});
