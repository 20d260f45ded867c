import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { thumbprintOf } from '../../../src/certificate-thumbprint.js';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type MutualTlsPartner, startMutualTlsPartner } from '../../doubles/mutual-tls-partner.js';
import { type CertificateWorkshop, certificateWorkshop } from '../../processes/certificates.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * send-request's `<authentication-certificate>` through Envoy and the engine
 * (learn.microsoft.com/azure/api-management/send-request-policy, child elements): the engine sends side requests
 * itself, so it presents the certificate in its own TLS handshake with a server that requires one — a store
 * certificate by certificate-id or thumbprint, or a PKCS #12 body with its password — and a request without it
 * (or with a blob it cannot read) fails into on-error.
 */
describe('send-request with authentication-certificate, against a server that requires a client certificate', () => {
  let workshop: CertificateWorkshop;
  let partner: MutualTlsPartner;
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    workshop = await certificateWorkshop();
    // A partner service that requires a client certificate from its client CA and says whose it got.
    partner = await startMutualTlsPartner(workshop);
    const gatewayClient = await partner.clientCa.issue({
      name: 'gateway-client',
      subject: '/CN=gateway-client',
      usage: 'client',
    });
    const blobClient = await partner.clientCa.issue({
      name: 'blob-client',
      subject: '/CN=blob-client',
      usage: 'client',
    });
    const pfx = (await workshop.pkcs12(blobClient, 's3cret')).toString('base64');
    const legacy = (await workshop.pkcs12(blobClient, 's3cret', { legacy: true })).toString('base64');
    // As the Azure portal shows it: hex pairs with colons.
    const thumbprint = thumbprintOf(new X509Certificate(gatewayClient.pem)).match(/../g)!.join(':');

    backend = await startEchoBackend();
    const call = (certificate: string) =>
      policy({
        inbound: `<send-request mode="new" response-variable-name="answer" timeout="10">
      <set-url>${partner.url}</set-url>
      ${certificate}
    </send-request>
    <return-response>
      <set-status code="200" reason="OK" />
      <set-body>@(((IResponse)context.Variables["answer"]).Body.As&lt;string&gt;())</set-body>
    </return-response>`,
        onError: `<return-response>
      <set-status code="502" reason="Bad Gateway" />
      <set-body>@(context.LastError.Source + " " + context.LastError.Reason)</set-body>
    </return-response>`,
      });
    gateway = await startGateway(
      `tls:
  certificates: { partner-client: { certificate: ${gatewayClient.certificateFile}, key: ${gatewayClient.keyFile} } }
apis:
${apiYaml('side', backend.url, [
  ['by-id', 'GET', '/by-id', 'by-id.xml'],
  ['by-thumbprint', 'GET', '/by-thumbprint', 'by-thumbprint.xml'],
  ['by-body', 'GET', '/by-body', 'by-body.xml'],
  ['legacy-body', 'GET', '/legacy-body', 'legacy-body.xml'],
  ['wrong-password', 'GET', '/wrong-password', 'wrong-password.xml'],
  ['without', 'GET', '/without', 'without.xml'],
])}
`,
      {
        'by-id.xml': call('<authentication-certificate certificate-id="partner-client" />'),
        'by-thumbprint.xml': call(`<authentication-certificate thumbprint="${thumbprint}" />`),
        'by-body.xml': call(
          `<authentication-certificate body="@(Convert.FromBase64String(&quot;${pfx}&quot;))" password="s3cret" />`,
        ),
        'legacy-body.xml': call(
          `<authentication-certificate body="@(Convert.FromBase64String(&quot;${legacy}&quot;))" password="s3cret" />`,
        ),
        'wrong-password.xml': call(
          `<authentication-certificate body="@(Convert.FromBase64String(&quot;${pfx}&quot;))" password="wrong" />`,
        ),
        'without.xml': call(''),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
    await partner?.close();
    await workshop?.remove();
  });

  const get = async (path: string) => {
    const response = await fetch(`${gateway.url}/side/${path}`);
    return { status: response.status, body: await response.text() };
  };

  it('presents the store certificate named by certificate-id, and reuses its connection', async () => {
    const before = partner.handshakes;
    expect(await get('by-id')).toEqual({ status: 200, body: 'gateway-client' });
    expect(await get('by-id')).toEqual({ status: 200, body: 'gateway-client' });
    expect(await get('by-id')).toEqual({ status: 200, body: 'gateway-client' });
    // One connection kept for the certificate (a second only if a request came before undici took the first back).
    expect(partner.handshakes - before).toBeGreaterThanOrEqual(1);
    expect(partner.handshakes - before).toBeLessThan(3);
  });

  it('presents the store certificate named by its thumbprint', async () => {
    expect(await get('by-thumbprint')).toEqual({ status: 200, body: 'gateway-client' });
  });

  it('presents a PKCS #12 body opened with its password', async () => {
    expect(await get('by-body')).toEqual({ status: 200, body: 'blob-client' });
  });

  it('fails into on-error without a certificate: the server refuses the handshake', async () => {
    // The connections made with certificates are not shared with a request that presents none.
    expect(await get('without')).toEqual({ status: 502, body: 'send-request BackendConnectionFailure' });
  });

  it('fails into on-error, before connecting, with a body it cannot open', async () => {
    const before = partner.handshakes;
    expect(await get('wrong-password')).toEqual({ status: 502, body: 'send-request CertificateInvalid' });
    // Node's OpenSSL 3 reads no RC2-encrypted PKCS #12 (docs/differences.md).
    expect(await get('legacy-body')).toEqual({ status: 502, body: 'send-request CertificateInvalid' });
    expect(partner.handshakes).toBe(before);
  });
});
