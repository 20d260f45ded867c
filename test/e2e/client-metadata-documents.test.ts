import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DocumentHost, startDocumentHost } from '../doubles/document-host.js';
import { HeadlessProvider } from '../doubles/mcp-oauth-provider.js';
import { insecure, type PublicClient, refreshTokens, signInWithPkce } from '../doubles/oauth-client.js';
import { PageDriver } from '../doubles/stack-browser.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';
import { until } from '../processes/wait.js';

/**
 * Client ID Metadata Documents through `portcullis up` and Envoy: clients known only by the https URL of their
 * metadata, served by a real HTTPS host on loopback (allowed by the development switch
 * auth.clientMetadataDocuments.allowedNetworks, its test CA trusted through trustedCa).
 */

const REDIRECT = 'http://127.0.0.1:47125/callback';
const SCOPE = 'read:courses-work write:courses-work';

let host: DocumentHost;
let stack: Stack;

function documentFor(url: string, name: string, redirect = REDIRECT) {
  return {
    client_id: url,
    client_name: name,
    redirect_uris: [redirect],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

beforeAll(async () => {
  host = await startDocumentHost();
  stack = await startStack({
    authYaml: `  clientMetadataDocuments:
    allowedNetworks: [127.0.0.1/32]
    trustedCa: ${JSON.stringify(host.caFile)}`,
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await host?.close();
});

describe('client metadata documents through Envoy', () => {
  it('are advertised in the authorization server metadata', async () => {
    const response = await fetch(`${stack.gatewayUrl}/.well-known/oauth-authorization-server`);
    expect(response.headers.get('server')).toBe('envoy');
    expect(await response.json()).toMatchObject({ client_id_metadata_document_supported: true });
  });

  it('a strict client (oauth4webapi) runs authorization code + PKCE → MCP → refresh with its document URL as client_id', async () => {
    const url = host.json(
      '/oauth/strict.json',
      documentFor(`${host.origin}/oauth/strict.json`, 'Strict Client'),
      {
        'cache-control': 'max-age=300',
      },
    );
    const issuer = new URL(stack.issuer);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    const registered: PublicClient = {
      as,
      client: { client_id: url, token_endpoint_auth_method: 'none' },
      redirectUri: REDIRECT,
    };
    const driver = new PageDriver();
    const tokens = await signInWithPkce(registered, driver, USERS.alice, {
      scope: SCOPE,
      resource: stack.mcpUrl,
    });
    expect(tokens.scope).toBe(SCOPE);

    // The consent page named the client and the host its document came from.
    const consent = driver.log.find(
      (line) => line.startsWith('GET') && line.includes('/v1/authorize/consent'),
    );
    expect(consent).toBeDefined();
    const page = await (
      await driver.fetch(
        `${as.authorization_endpoint}?${new URLSearchParams({
          response_type: 'code',
          client_id: url,
          redirect_uri: REDIRECT,
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
          scope: 'read:grades-work',
        })}`,
      )
    ).text();
    // A new scope: consent is asked again, on a page that names the document's host.
    expect(page).toContain('<h1>Authorize Strict Client</h1>');
    expect(page).toContain(`identified by <code>${new URL(host.origin).host}</code>`);

    const initialize = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'strict', version: '1' },
        },
      }),
    });
    expect(initialize.status).toBe(200);

    const refreshed = await refreshTokens(as, registered.client, oauth.None(), tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    // One fetch for the whole flow: the document is kept per its max-age.
    expect(host.hits('/oauth/strict.json')).toBe(1);
  });

  it('the official MCP TypeScript SDK uses its clientMetadataUrl instead of registering', async () => {
    const redirect = 'http://127.0.0.1:47126/callback';
    const url = host.json(
      '/oauth/sdk.json',
      documentFor(`${host.origin}/oauth/sdk.json`, 'TS SDK Client', redirect),
    );
    const provider = new HeadlessProvider({
      user: USERS.bob,
      clientName: 'TS SDK Client',
      redirectUrl: redirect,
      clientMetadataUrl: url,
    });
    const first = new Client({ name: 'cimd-e2e', version: '1.0.0' });
    const firstTransport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl), {
      authProvider: provider,
    });
    await expect(first.connect(firstTransport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.clientInformation()?.client_id).toBe(url);
    expect(provider.authorizationUrls[0]!.searchParams.get('client_id')).toBe(url);
    await firstTransport.finishAuth(provider.code!);
    const client = new Client({ name: 'cimd-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider }),
    );
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('list-courses');
    await client.close();
    // The SDK never called the registration endpoint.
    expect(stack.output()).not.toMatch(/"type":"client\.registered"/);
  });

  it('a document that cannot be used is an error page, never a redirect; the security log says why', async () => {
    const url = host.serve('/oauth/moved.json', (_request, response) =>
      response.writeHead(301, { location: '/oauth/strict.json' }).end(),
    );
    const authorize = new URL(`${stack.gatewayUrl}/v1/authorize`);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: url,
      redirect_uri: REDIRECT,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    const response = await fetch(authorize, { redirect: 'manual' });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('answered 301 (a redirect); redirects are not followed');
    await until(
      () => /"type":"client_document\.refused".*"reason":"redirect"/.test(stack.output()),
      'the client_document.refused event',
      { timeoutMs: 5000, detail: () => stack.output() },
    );
  });
});
