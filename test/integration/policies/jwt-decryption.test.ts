import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactEncrypt, exportJWK, generateKeyPair, importX509, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type CertificateWorkshop, certificateWorkshop } from '../../processes/certificates.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
type EncryptionKey = Parameters<CompactEncrypt['encrypt']>[0];

/**
 * `<decryption-keys>` through Envoy and the engine: validate-jwt opens nested JWTs (A256KW) with a symmetric key
 * from a secret named value; validate-azure-ad-token opens Entra-style encrypted tokens (RSA-OAEP-256) with the
 * private key of a certificate of the gateway's store (tls.certificates), then checks the inner token against the
 * tenant's keys served by a local Entra-shaped OpenID provider.
 */
describe('decryption-keys through Envoy', () => {
  const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47';
  const backendApp = '22222222-2222-2222-2222-222222222222';
  const signingSecret = Buffer.from('gateway-signing-key-0123456789ab');
  const wrappingKey = Buffer.from('gateway-wrapping-key-0123456789a');
  let workshop: CertificateWorkshop;
  let certificatePublicKey: EncryptionKey;
  let backend: EchoBackend;
  let provider: Server;
  let authority: string;
  let entraKey: SigningKey;
  let gateway: GatewayStack;

  beforeAll(async () => {
    workshop = await certificateWorkshop();
    const certificate = await workshop.selfSigned({
      name: 'entra-jwe',
      subject: '/CN=token-decryption',
      usage: 'server',
      key: 'rsa',
    });
    certificatePublicKey = await importX509(certificate.pem, 'RSA-OAEP-256');
    const keys = await generateKeyPair('RS256', { extractable: true });
    entraKey = keys.privateKey;
    const jwk: JWK = { ...(await exportJWK(keys.publicKey)), kid: 'entra-1', use: 'sig' };
    provider = createServer((request, response) => {
      const json = (body: unknown) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      if (request.url === `/${tenant}/v2.0/.well-known/openid-configuration`)
        json({
          issuer: `${authority}/${tenant}/v2.0`,
          jwks_uri: `${authority}/${tenant}/discovery/v2.0/keys`,
        });
      else if (request.url === `/${tenant}/discovery/v2.0/keys`) json({ keys: [jwk] });
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    authority = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    backend = await startEchoBackend();
    const onError = `<set-header name="X-Reason" exists-action="override"><value>@(context.LastError.Reason)</value></set-header>`;
    gateway = await startGateway(
      `namedValues:
  signing-key: { value: ${signingSecret.toString('base64')}, secret: true }
  wrapping-key: { value: ${wrappingKey.toString('base64')}, secret: true }
identities:
  entraAuthority: ${authority}
tls:
  certificates: { entra-jwe: { certificate: ${certificate.certificateFile}, key: ${certificate.keyFile} } }
apis:
${apiYaml('orders', backend.url, [
  ['jwt', 'GET', '/jwt', 'jwt.xml'],
  ['entra', 'GET', '/entra', 'entra.xml'],
])}
`,
      {
        'jwt.xml': policy({
          inbound: `<validate-jwt header-name="X-Token" output-token-variable-name="jwt">
      <issuer-signing-keys><key>{{signing-key}}</key></issuer-signing-keys>
      <decryption-keys><key>{{wrapping-key}}</key></decryption-keys>
    </validate-jwt>
    <set-header name="X-Subject" exists-action="override"><value>@(((Jwt)context.Variables["jwt"]).Subject)</value></set-header>`,
          onError,
        }),
        'entra.xml': policy({
          inbound: `<validate-azure-ad-token tenant-id="${tenant}" output-token-variable-name="jwt">
      <backend-application-ids><application-id>${backendApp}</application-id></backend-application-ids>
      <decryption-keys><key certificate-id="entra-jwe" /></decryption-keys>
    </validate-azure-ad-token>
    <set-header name="X-Subject" exists-action="override"><value>@(((Jwt)context.Variables["jwt"]).Subject)</value></set-header>`,
          onError,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
    await new Promise((resolve) => provider?.close(resolve));
    await workshop?.remove();
  });

  const signed = () =>
    new SignJWT({ scp: 'Orders.Read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('user-42')
      .setExpirationTime('5m')
      .sign(signingSecret);
  const entraToken = () =>
    new SignJWT({ ver: '2.0', tid: tenant, aud: backendApp })
      .setProtectedHeader({ alg: 'RS256', kid: 'entra-1', typ: 'JWT' })
      .setIssuer(`${authority}/${tenant}/v2.0`)
      .setSubject('user-oid-1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(entraKey);
  const encrypt = async (inner: string, key: EncryptionKey, alg: string) =>
    new CompactEncrypt(new TextEncoder().encode(inner))
      .setProtectedHeader({ alg, enc: 'A256GCM', cty: 'JWT' })
      .encrypt(key);

  const call = (path: string, headers: Record<string, string>) =>
    fetch(`${gateway.url}/orders/${path}`, { headers });
  async function expectPassed(response: Response, subject: string) {
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.headers['x-subject']).toBe(subject);
  }
  async function expectRefused(response: Response) {
    expect(response.status).toBe(401);
    expect(response.headers.get('x-reason')).toBe('JwtInvalid');
    expect(await response.json()).toEqual({ statusCode: 401, message: 'Invalid JWT.' });
  }

  it('validate-jwt opens a nested JWT with the symmetric key and checks the token inside', async () => {
    const token = await encrypt(await signed(), wrappingKey, 'A256KW');
    await expectPassed(await call('jwt', { 'X-Token': token }), 'user-42');
  });

  it('validate-jwt refuses a token encrypted for another key, before the backend', async () => {
    const before = backend.received.length;
    const token = await encrypt(await signed(), Buffer.from('someone-elses-key-0123456789abcd'), 'A256KW');
    await expectRefused(await call('jwt', { 'X-Token': token }));
    expect(backend.received.length).toBe(before);
  });

  it('validate-jwt still takes a token that is not encrypted', async () => {
    await expectPassed(await call('jwt', { 'X-Token': await signed() }), 'user-42');
  });

  it('validate-azure-ad-token opens an RSA-OAEP token with the store certificate’s private key', async () => {
    const token = await encrypt(await entraToken(), certificatePublicKey, 'RSA-OAEP-256');
    await expectPassed(await call('entra', { Authorization: `Bearer ${token}` }), 'user-oid-1');
  });

  it('validate-azure-ad-token refuses a token encrypted for another public key', async () => {
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    const token = await encrypt(await entraToken(), stranger, 'RSA-OAEP-256');
    await expectRefused(await call('entra', { Authorization: `Bearer ${token}` }));
  });

  it('validate-azure-ad-token still takes a token that is not encrypted', async () => {
    await expectPassed(await call('entra', { Authorization: `Bearer ${await entraToken()}` }), 'user-oid-1');
  });
});
