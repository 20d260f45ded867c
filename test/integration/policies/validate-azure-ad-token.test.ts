import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/**
 * validate-azure-ad-token through Envoy and the engine against a local OpenID provider shaped like Entra ID: the
 * tenant's v1.0 configuration at /{tenant}/.well-known/openid-configuration (issuer https://sts.windows.net/…
 * style) and v2.0 at /{tenant}/v2.0/…, one key set; identities.entraAuthority points the policy's tenant there.
 */
describe('validate-azure-ad-token through Envoy', () => {
  const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47';
  const clientApp = '11111111-1111-1111-1111-111111111111';
  const backendApp = '22222222-2222-2222-2222-222222222222';
  let backend: EchoBackend;
  let provider: Server;
  let authority: string;
  let gateway: GatewayStack;
  let signingKey: SigningKey;
  let strangerKey: SigningKey;
  const v1Issuer = () => `${authority}/sts/${tenant}/`;
  const v2Issuer = () => `${authority}/${tenant}/v2.0`;

  beforeAll(async () => {
    const keys = await generateKeyPair('RS256', { extractable: true });
    signingKey = keys.privateKey;
    strangerKey = (await generateKeyPair('RS256')).privateKey;
    const jwk: JWK = { ...(await exportJWK(keys.publicKey)), kid: 'entra-1', use: 'sig' };
    provider = createServer((request, response) => {
      const json = (body: unknown) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      if (request.url === `/${tenant}/.well-known/openid-configuration`)
        json({ issuer: v1Issuer(), jwks_uri: `${authority}/common/discovery/keys` });
      else if (request.url === `/${tenant}/v2.0/.well-known/openid-configuration`)
        json({ issuer: v2Issuer(), jwks_uri: `${authority}/${tenant}/discovery/v2.0/keys` });
      else if (request.url === '/common/discovery/keys' || request.url === `/${tenant}/discovery/v2.0/keys`)
        json({ keys: [jwk] });
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    authority = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    backend = await startEchoBackend();
    const onError = `<set-header name="X-Reason" exists-action="override"><value>@(context.LastError.Reason)</value></set-header>`;
    gateway = await startGateway(
      `namedValues:
  TenantId: ${tenant}
  ClientId: ${clientApp}
identities:
  entraAuthority: ${authority}
apis:
${apiYaml('orders', backend.url, [
  ['apps', 'GET', '/apps', 'apps.xml'],
  ['claims', 'GET', '/claims', 'claims.xml'],
  ['fragment', 'GET', '/fragment', 'fragment.xml'],
])}
`,
      {
        'apps.xml': policy({
          inbound: `<validate-azure-ad-token tenant-id="{{TenantId}}" output-token-variable-name="jwt">
      <client-application-ids><application-id>{{ClientId}}</application-id></client-application-ids>
      <backend-application-ids><application-id>${backendApp}</application-id></backend-application-ids>
    </validate-azure-ad-token>
    <set-header name="X-Subject" exists-action="override"><value>@(((Jwt)context.Variables["jwt"]).Subject)</value></set-header>`,
          onError,
        }),
        'claims.xml': policy({
          inbound: `<validate-azure-ad-token tenant-id="{{TenantId}}" header-name="X-Token" failed-validation-httpcode="403" failed-validation-error-message="Forbidden here">
      <audiences><audience>api://orders</audience></audiences>
      <required-claims><claim name="roles" match="any"><value>Orders.Read</value><value>Orders.Admin</value></claim></required-claims>
    </validate-azure-ad-token>`,
          onError,
        }),
        // The corpus's oauth-proxy fragment: the token from a variable, only the client application checked.
        'fragment.xml': policy({
          inbound: `<set-variable name="accessToken" value="@(context.Request.Url.Query.GetValueOrDefault(&quot;t&quot;, &quot;&quot;))" />
    <validate-azure-ad-token tenant-id="{{TenantId}}" token-value="@((string)context.Variables[&quot;accessToken&quot;])">
      <client-application-ids><application-id>{{ClientId}}</application-id></client-application-ids>
    </validate-azure-ad-token>`,
          onError,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
    await new Promise((resolve) => provider?.close(resolve));
  });

  const v2 = (claims: Record<string, unknown> = {}, key = signingKey, expiresIn: string | number = '5m') =>
    new SignJWT({ ver: '2.0', tid: tenant, azp: clientApp, aud: backendApp, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'entra-1', typ: 'JWT' })
      .setIssuer((claims.iss as string | undefined) ?? v2Issuer())
      .setSubject('user-oid-1')
      .setIssuedAt()
      .setExpirationTime(expiresIn)
      .sign(key);
  const v1 = (claims: Record<string, unknown> = {}) =>
    new SignJWT({ ver: '1.0', tid: tenant, appid: clientApp, aud: `api://${backendApp}`, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'entra-1', typ: 'JWT' })
      .setIssuer(v1Issuer())
      .setSubject('user-oid-1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(signingKey);

  const call = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}/orders/${path}`, { headers });
  async function refused(response: Response, status: number, reason: string, message: string) {
    expect(response.status).toBe(status);
    expect(response.headers.get('x-reason')).toBe(reason);
    expect(await response.json()).toEqual({ statusCode: status, message });
  }

  it('accepts a v2.0 token of the allowed client for the backend application', async () => {
    const response = await call('apps', { Authorization: `Bearer ${await v2()}` });
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.headers['x-subject']).toBe('user-oid-1');
  });

  it('accepts a v1.0 token (appid, sts issuer, api:// audience) against the v1 configuration', async () => {
    expect((await call('apps', { Authorization: `Bearer ${await v1()}` })).status).toBe(200);
  });

  it('refuses each failure with its reason and API Management message', async () => {
    const bearer = async (token: Promise<string>) => ({ Authorization: `Bearer ${await token}` });
    await refused(await call('apps'), 401, 'TokenNotPresent', 'JWT not present.');
    await refused(
      await call('apps', { Authorization: 'Bearer not-a-jwt' }),
      401,
      'JwtInvalid',
      'Invalid JWT.',
    );
    await refused(
      await call('apps', await bearer(v2({}, signingKey, -60))),
      401,
      'TokenExpired',
      'Invalid JWT.',
    );
    await refused(
      await call('apps', await bearer(v2({}, strangerKey))),
      401,
      'TokenSignatureInvalid',
      'Invalid JWT.',
    );
    await refused(
      await call('apps', await bearer(v2({ iss: `${authority}/other-tenant/v2.0` }))),
      401,
      'TokenIssuerNotAllowed',
      'Invalid JWT.',
    );
    await refused(
      await call('apps', await bearer(v2({ azp: '33333333-3333-3333-3333-333333333333' }))),
      401,
      'TokenClientApplicationNotAllowed',
      'Invalid JWT.',
    );
    await refused(
      await call('apps', await bearer(v2({ aud: 'https://graph.microsoft.com' }))),
      401,
      'TokenAudienceNotAllowed',
      'Invalid JWT.',
    );
  });

  it('checks audiences and required claims, with the policy status and message, from another header', async () => {
    const token = (roles: string[]) => v2({ aud: 'api://orders', roles });
    expect((await call('claims', { 'X-Token': await token(['Orders.Admin']) })).status).toBe(200);
    await refused(
      await call('claims', { 'X-Token': await token(['Billing.Read']) }),
      403,
      'TokenClaimValueNotAllowed',
      'Forbidden here',
    );
    await refused(
      await call('claims', { 'X-Token': await v2({ roles: ['Orders.Read'] }) }),
      403,
      'TokenAudienceNotAllowed',
      'Forbidden here',
    );
  });

  it('runs the corpus fragment: a token from a variable, only the client application checked', async () => {
    expect((await call(`fragment?t=${await v2({ aud: 'anything' })}`)).status).toBe(200);
    await refused(
      await call(`fragment?t=${await v2({ azp: 'someone-else' })}`),
      401,
      'TokenClientApplicationNotAllowed',
      'Invalid JWT.',
    );
  });
});
