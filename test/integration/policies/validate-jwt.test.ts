import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { engineTransports } from '../../processes/ext-authz.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * validate-jwt as in spec §5.2.4: the Authorization header, failed-validation-httpcode 401, an openid-config whose
 * document and keys a test HTTP server publishes, and the required claim `aud` equal to the gateway's client id.
 */
describe.each(engineTransports)('validate-jwt through Envoy (%s)', (transport) => {
  const clientId = 'gateway-client-7f3c';
  const message = 'Unauthorized. Access token is missing or invalid.';
  let backend: EchoBackend;
  let provider: Server;
  let issuer: string;
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  let publicPem: string;
  let gateway: GatewayStack;
  const lastError = `<set-header name="X-Reason" exists-action="override"><value>@(context.LastError.Reason)</value></set-header>
    <set-header name="X-Message" exists-action="override"><value>@(context.LastError.Message)</value></set-header>`;

  const token = (claims: Record<string, unknown> = {}, expiresIn: string | number = '5m') =>
    new SignJWT({ aud: clientId, scp: 'Course.Read', ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'key-1' })
      .setIssuer((claims.iss as string | undefined) ?? issuer)
      .setSubject('user-42')
      .setIssuedAt()
      .setExpirationTime(expiresIn)
      .sign(privateKey);

  beforeAll(async () => {
    const keys = await generateKeyPair('RS256', { extractable: true });
    privateKey = keys.privateKey;
    publicPem = await exportSPKI(keys.publicKey);
    const jwk: JWK = { ...(await exportJWK(keys.publicKey)), kid: 'key-1', alg: 'RS256', use: 'sig' };
    provider = createServer((request, response) => {
      const base = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
      if (request.url === '/tenant-1/v2.0/.well-known/openid-configuration') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ issuer: `${base}/tenant-1/v2.0`, jwks_uri: `${base}/tenant-1/discovery/keys` }),
        );
      } else if (request.url === '/tenant-1/discovery/keys') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ keys: [jwk] }));
      } else {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    issuer = `${providerUrl}/tenant-1/v2.0`;
    backend = await startEchoBackend();
    gateway = await startGateway(
      `namedValues:
  gateway-client-id: ${clientId}
  identity-provider: ${providerUrl}
apis:
${apiYaml('courses', backend.url, [
  ['list', 'GET', '/api/Course', 'op.xml'],
  ['grades', 'GET', '/api/Grades', 'grades.xml'],
])}
`,
      {
        'op.xml': policy({
          inbound: `
    <validate-jwt header-name="Authorization" failed-validation-httpcode="401" failed-validation-error-message="${message}" require-scheme="Bearer" output-token-variable-name="jwt">
      <openid-config url="{{identity-provider}}/tenant-1/v2.0/.well-known/openid-configuration" />
      <required-claims>
        <claim name="aud" match="all"><value>{{gateway-client-id}}</value></claim>
      </required-claims>
    </validate-jwt>
    <set-header name="X-Subject" exists-action="override"><value>@(((Jwt)context.Variables["jwt"]).Subject)</value></set-header>`,
          onError: lastError,
        }),
        'grades.xml': policy({
          inbound: `
    <validate-jwt header-name="Authorization" failed-validation-httpcode="401" failed-validation-error-message="${message}">
      <openid-config url="{{identity-provider}}/tenant-1/v2.0/.well-known/openid-configuration" />
      <required-claims>
        <claim name="scp" match="any"><value>Grades.Read</value><value>Grades.Write</value></claim>
        <claim name="roles" />
        <claim name="tid" />
      </required-claims>
    </validate-jwt>`,
          onError: lastError,
        }),
      },
      {},
      undefined,
      transport,
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
    await new Promise((resolve) => provider?.close(resolve));
  });

  const call = (authorization?: string) =>
    fetch(
      `${gateway.url}/courses/api/Course`,
      authorization ? { headers: { Authorization: authorization } } : {},
    );

  async function expectRefused(response: Response, reason: string) {
    expect(response.status).toBe(401);
    expect(response.headers.get('x-reason')).toBe(reason);
    expect(await response.json()).toEqual({ statusCode: 401, message });
  }

  it('accepts a token signed by a key published through the openid-config document', async () => {
    const response = await call(`Bearer ${await token()}`);
    expect(response.status).toBe(200);
    const received = backend.received.at(-1)!;
    expect(received.url).toBe('/api/Course');
    expect(received.headers['x-subject']).toBe('user-42');
  });

  it('refuses a request without a token', async () => {
    const before = backend.received.length;
    await expectRefused(await call(), 'TokenNotPresent');
    expect(backend.received.length).toBe(before);
  });

  it('refuses a token under another scheme', async () => {
    await expectRefused(await call(`Basic ${await token()}`), 'TokenNotPresent');
  });

  it('refuses an expired token', async () => {
    await expectRefused(
      await call(`Bearer ${await token({}, Math.floor(Date.now() / 1000) - 60)}`),
      'TokenExpired',
    );
  });

  it('refuses a token for another audience (the required aud claim)', async () => {
    const response = await call(`Bearer ${await token({ aud: 'someone-else' })}`);
    // LastError.Message is API Management's text ("Error handling in API Management policies", predefined errors).
    expect(response.headers.get('x-message')).toBe(
      'Claim aud value of someone-else is not allowed. Access denied.',
    );
    await expectRefused(response, 'TokenClaimValueNotAllowed');
  });

  it('names every missing required claim in LastError.Message, the client seeing the configured message', async () => {
    const response = await fetch(`${gateway.url}/courses/api/Grades`, {
      headers: { Authorization: `Bearer ${await token()}` },
    });
    expect(response.headers.get('x-message')).toBe(
      'JWT token is missing the following claims: roles, tid. Access denied.',
    );
    await expectRefused(response, 'TokenClaimNotFound');
  });

  it('names the claim and the value the token carries when none of the allowed values is there', async () => {
    const response = await fetch(`${gateway.url}/courses/api/Grades`, {
      headers: { Authorization: `Bearer ${await token({ roles: ['Teacher'], tid: 'tenant-1' })}` },
    });
    expect(response.headers.get('x-message')).toBe(
      'Claim scp value of Course.Read is not allowed. Access denied.',
    );
    await expectRefused(response, 'TokenClaimValueNotAllowed');
  });

  it('refuses a token from another issuer than the openid-config names', async () => {
    await expectRefused(
      await call(`Bearer ${await token({ iss: 'https://evil.example/' })}`),
      'TokenIssuerNotAllowed',
    );
  });

  it('refuses an unsigned token (alg none)', async () => {
    const unsigned = new UnsecuredJWT({ aud: clientId })
      .setIssuer(issuer)
      .setSubject('user-42')
      .setExpirationTime('5m')
      .encode();
    await expectRefused(await call(`Bearer ${unsigned}`), 'TokenSignatureInvalid');
  });

  it('refuses an HS256 token signed with the public key as the secret', async () => {
    const forged = await new SignJWT({ aud: clientId })
      .setProtectedHeader({ alg: 'HS256', kid: 'key-1' })
      .setIssuer(issuer)
      .setSubject('user-42')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(publicPem));
    const response = await call(`Bearer ${forged}`);
    expect(response.status).toBe(401);
    expect(['TokenSignatureInvalid', 'TokenSignatureKeyNotFound']).toContain(
      response.headers.get('x-reason'),
    );
    expect(await response.json()).toEqual({ statusCode: 401, message });
  });

  it('refuses a token whose signature does not match', async () => {
    const [header, payload] = (await token()).split('.');
    const tampered = `${header}.${payload}.${Buffer.from('not the signature').toString('base64url')}`;
    await expectRefused(await call(`Bearer ${tampered}`), 'TokenSignatureInvalid');
  });
});
