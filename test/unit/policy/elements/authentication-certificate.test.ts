import { describe, expect, it } from 'vitest';
import type { BackendCertificates } from '../../../../src/policy/elements/authentication-certificate.js';
import { fakeServices, inbound, pipelineOf, policies } from '../../../doubles/policy-services.js';

const thumbprint = 'AB'.repeat(20);

/** The engine's table of what Envoy presents: backend "secure" and API "" (the fakes' API) present "partner". */
function servicesWithTable() {
  const services = fakeServices({ secure: 'https://secure.example', plain: 'https://plain.example' });
  const backendCertificates: BackendCertificates = {
    presented: (target) =>
      target.backendId === 'secure' || target.apiId === '' ? { id: 'partner', thumbprint } : undefined,
  };
  return Object.assign(services, { backendCertificates });
}

describe('authentication-certificate', () => {
  it('passes when the backend the request goes to presents the named certificate (by id or thumbprint)', async () => {
    for (const attribute of ['certificate-id="partner"', `thumbprint="${thumbprint.toLowerCase()}"`]) {
      const { outcome } = await inbound(
        `<set-backend-service backend-id="secure" /><authentication-certificate ${attribute} />`,
        {},
        servicesWithTable(),
      );
      expect(outcome.kind).toBe('forward');
    }
    const { outcome } = await inbound(
      '<authentication-certificate certificate-id="partner" />',
      {},
      servicesWithTable(),
    );
    expect(outcome.kind).toBe('forward');
  });

  it('refuses (500) before the backend is called when the configuration presents another or no certificate', async () => {
    const other = await inbound(
      '<authentication-certificate certificate-id="someone-else" />',
      {},
      servicesWithTable(),
    );
    expect(other.outcome.kind === 'respond' && other.outcome.response.status).toBe(500);
    expect(other.context.lastError?.reason).toBe('BackendCertificateNotConfigured');
    expect(other.context.lastError?.message).toContain('configured to present certificate "partner"');
    const none = await inbound(
      '<set-backend-service backend-id="plain" /><authentication-certificate certificate-id="partner" />',
      {},
      servicesWithTable(),
    );
    expect(none.context.lastError?.message).toContain(
      'backend "plain" is configured to present none (tls.backends.plain)',
    );
    const unwired = await inbound('<authentication-certificate certificate-id="partner" />');
    expect(unwired.context.lastError?.reason).toBe('BackendCertificateNotConfigured');
  });

  it('rejects a certificate from body/password and needs exactly one of thumbprint and certificate-id', () => {
    expect(() =>
      pipelineOf(policies({ inbound: '<authentication-certificate body="@(new byte[0])" />' })),
    ).toThrow(/"authentication-certificate" with @body is not supported/);
    expect(() => pipelineOf(policies({ inbound: '<authentication-certificate />' }))).toThrow(
      /needs exactly one of thumbprint and certificate-id/,
    );
  });
});
