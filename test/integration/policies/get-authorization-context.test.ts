import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * get-authorization-context through Envoy and the engine: a credential provider whose client-credentials connection
 * gets its token from a local OAuth token endpoint; expressions read it through the Authorization type.
 */
describe('get-authorization-context through Envoy', () => {
  let backend: EchoBackend;
  let tokenEndpoint: Server;
  let gateway: GatewayStack;
  const forms: URLSearchParams[] = [];

  beforeAll(async () => {
    const { privateKey } = await generateKeyPair('ES256');
    tokenEndpoint = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', async () => {
        const form = new URLSearchParams(body);
        forms.push(form);
        const basic = `Basic ${Buffer.from('gateway-app:s3cret').toString('base64')}`;
        if (request.headers.authorization !== basic || form.get('grant_type') !== 'client_credentials') {
          response.writeHead(401, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ error: 'invalid_client' }));
          return;
        }
        const token = await new SignJWT({ scope: form.get('scope'), tenant: 'contoso' })
          .setProtectedHeader({ alg: 'ES256' })
          .setSubject('gateway-app')
          .setExpirationTime('10m')
          .sign(privateKey);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 600 }));
      });
    });
    await new Promise<void>((resolve) => tokenEndpoint.listen(0, '127.0.0.1', resolve));
    const tokenUrl = `http://127.0.0.1:${(tokenEndpoint.address() as AddressInfo).port}/token`;
    backend = await startEchoBackend();
    const onError = `<set-header name="X-Reason" exists-action="override"><value>@(context.LastError.Reason)</value></set-header>`;
    gateway = await startGateway(
      `identities:
  credentialProviders:
    graph:
      source: { type: client-credentials, tokenUrl: "${tokenUrl}", clientId: gateway-app, clientSecret: s3cret, resourceAs: entra-scope }
      connections:
        reader: { resource: "https://graph.microsoft.com" }
apis:
${apiYaml('me', backend.url, [
  ['ok', 'GET', '/ok', 'ok.xml'],
  ['missing', 'GET', '/missing', 'missing.xml'],
])}
`,
      {
        'ok.xml': policy({
          inbound: `<get-authorization-context provider-id="graph" authorization-id="reader" context-variable-name="auth-context" identity-type="managed" ignore-error="false" />
    <set-header name="Authorization" exists-action="override"><value>@("Bearer " + ((Authorization)context.Variables.GetValueOrDefault("auth-context"))?.AccessToken)</value></set-header>
    <set-header name="X-Tenant" exists-action="override"><value>@((string)((Authorization)context.Variables["auth-context"]).Claims["tenant"])</value></set-header>`,
          onError,
        }),
        'missing.xml': policy({
          inbound:
            '<get-authorization-context provider-id="graph" authorization-id="writer" context-variable-name="auth-context" />',
          onError,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
    await new Promise((resolve) => tokenEndpoint?.close(resolve));
  });

  it('hands the connection token to expressions as Authorization (AccessToken, Claims), fetched once', async () => {
    for (let i = 0; i < 2; i++) expect((await fetch(`${gateway.url}/me/ok`)).status).toBe(200);
    const received = backend.received.at(-1)!;
    expect(received.headers.authorization).toMatch(/^Bearer eyJ/);
    expect(received.headers['x-tenant']).toBe('contoso');
    expect(forms).toHaveLength(1);
    expect(forms[0]!.get('scope')).toBe('https://graph.microsoft.com/.default');
  });

  it('runs on-error for a connection the provider does not have', async () => {
    const response = await fetch(`${gateway.url}/me/missing`);
    expect(response.status).toBe(500);
    expect(response.headers.get('x-reason')).toBe('AuthorizationNotAvailable');
  });
});
