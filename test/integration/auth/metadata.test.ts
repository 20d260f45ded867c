import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshTokens } from '../../doubles/oauth-client.js';
import {
  authorize,
  discover,
  insecure,
  obtainTokens,
  postForm,
  type RegisteredClient,
  register,
  startServer,
  type TestServer,
} from '../../processes/auth-server.js';

/** Every value the metadata advertises is checked against what the endpoint actually does. */
describe('metadata tells the truth', () => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;
  let metadata: Record<string, unknown>;
  const clients = new Map<string, RegisteredClient>();

  beforeAll(async () => {
    server = await startServer({ limits: { registrationsPerAddress: 1000 } });
    as = await discover(server);
    metadata = as as unknown as Record<string, unknown>;
    for (const method of as.token_endpoint_auth_methods_supported!) {
      clients.set(
        method,
        await register(as, method as 'none' | 'client_secret_basic' | 'client_secret_post'),
      );
    }
  });
  afterAll(() => server.close());

  it('is served at the base URL with or without MCP-Protocol-Version, and equals the in-process document', async () => {
    const response = await fetch(`${server.url}/.well-known/oauth-authorization-server`, {
      headers: { 'MCP-Protocol-Version': '2024-11-05' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(server.as.metadata());
    expect(metadata.issuer).toBe(server.issuer);
  });

  it('advertises exactly the fields of spec §2.1 plus jwks, introspection, scopes, iss and CIMD support', () => {
    expect(Object.keys(metadata).sort()).toEqual(
      [
        'issuer',
        'authorization_endpoint',
        'token_endpoint',
        'registration_endpoint',
        'revocation_endpoint',
        'introspection_endpoint',
        'jwks_uri',
        'scopes_supported',
        'response_types_supported',
        'response_modes_supported',
        'grant_types_supported',
        'token_endpoint_auth_methods_supported',
        'revocation_endpoint_auth_methods_supported',
        'introspection_endpoint_auth_methods_supported',
        'code_challenge_methods_supported',
        'authorization_response_iss_parameter_supported',
        'client_id_metadata_document_supported',
      ].sort(),
    );
    expect(metadata.revocation_endpoint).toBe(metadata.token_endpoint);
  });

  it('every token_endpoint_auth_method authenticates a code exchange and a refresh', async () => {
    for (const [method, client] of clients) {
      const { tokens } = await obtainTokens(server, as, client);
      expect(tokens.access_token, method).toBeTruthy();
      const refreshed = await refreshTokens(as, client.client, client.auth, tokens.refresh_token!);
      expect(refreshed.access_token, method).toBeTruthy();
    }
  });

  it('every revocation_endpoint_auth_method is accepted by the revocation endpoint', async () => {
    for (const method of as.revocation_endpoint_auth_methods_supported!) {
      const client = clients.get(method)!;
      const { tokens } = await obtainTokens(server, as, client);
      const response = await oauth.revocationRequest(
        as,
        client.client,
        client.auth,
        tokens.refresh_token!,
        insecure,
      );
      expect(response.status, method).toBe(200);
    }
  });

  it('introspection accepts exactly the advertised methods', async () => {
    const advertised = metadata.introspection_endpoint_auth_methods_supported as string[];
    for (const [method, client] of clients) {
      const response = await oauth.introspectionRequest(as, client.client, client.auth, 'x', insecure);
      expect(response.status, method).toBe(advertised.includes(method) ? 200 : 401);
    }
  });

  it('every grant type is served and a non-advertised one is refused', async () => {
    const pub = clients.get('none')!;
    for (const grant of as.grant_types_supported!) {
      const result = await postForm(as.token_endpoint!, {
        grant_type: grant,
        client_id: pub.client.client_id,
      });
      expect(result.json!.error, grant).toBe('invalid_request'); // served: complains about its own parameters
    }
    const other = await postForm(as.token_endpoint!, {
      grant_type: 'client_credentials',
      client_id: pub.client.client_id,
    });
    expect(other.json!.error).toBe('unsupported_grant_type');
  });

  it('every code_challenge_method works end to end; another is refused', async () => {
    const pub = clients.get('none')!;
    for (const method of as.code_challenge_methods_supported!) {
      const verifier = oauth.generateRandomCodeVerifier();
      const challenge = method === 'S256' ? await oauth.calculatePKCECodeChallenge(verifier) : verifier;
      const result = await authorize(server, pub, {
        code_challenge: challenge,
        code_challenge_method: method,
      });
      const exchanged = await postForm(as.token_endpoint!, {
        grant_type: 'authorization_code',
        code: result.location!.searchParams.get('code')!,
        code_verifier: verifier,
        client_id: pub.client.client_id,
      });
      expect(exchanged.status, method).toBe(200);
    }
    const refused = await authorize(server, pub, { code_challenge_method: 'S384' });
    expect(refused.location!.searchParams.get('error')).toBe('invalid_request');
  });

  it('response types and modes: code in the query; token refused', async () => {
    const pub = clients.get('none')!;
    expect(as.response_types_supported).toEqual(['code']);
    expect(metadata.response_modes_supported).toEqual(['query']);
    const ok = await authorize(server, pub);
    expect(ok.location!.search).toContain('code=');
    expect(ok.location!.hash).toBe('');
    const refused = await authorize(server, pub, { response_type: 'token' });
    expect(refused.location!.searchParams.get('error')).toBe('unsupported_response_type');
  });

  it('every advertised scope can be granted and lands in the token', async () => {
    const pub = clients.get('none')!;
    const scope = as.scopes_supported!.join(' ');
    const { tokens } = await obtainTokens(server, as, pub, { scope });
    expect(tokens.scope).toBe(scope);
  });

  it('authorization_response_iss_parameter_supported: iss is on every authorization response', async () => {
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    const pub = clients.get('none')!;
    const ok = await authorize(server, pub);
    const denied = await authorize(server, await register(as, 'none'), {}, { decision: 'deny' });
    expect(ok.location!.searchParams.get('iss')).toBe(server.issuer);
    expect(denied.location!.searchParams.get('iss')).toBe(server.issuer);
  });

  it('jwks_uri publishes the current and next keys, and the algorithm that signs', async () => {
    const jwks = (await (await fetch(as.jwks_uri!)).json()) as {
      keys: { kid: string; alg: string; d?: string }[];
    };
    expect(jwks.keys).toHaveLength(2);
    expect(jwks.keys.every((k) => k.alg === 'ES256' && k.d === undefined)).toBe(true);
  });
});

describe('issuer with a path', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}, { issuerPath: '/tenant1' });
  });
  afterAll(() => server.close());

  it('serves RFC 8414 metadata at the path-inserted URL that oauth4webapi derives, and at the base URL', async () => {
    const as = await discover(server);
    expect(as.issuer).toBe(server.issuer);
    expect(as.token_endpoint).toBe(`${server.issuer}/v1/token`);
    const atBase = await fetch(`${server.url}/.well-known/oauth-authorization-server`);
    expect(((await atBase.json()) as { issuer: string }).issuer).toBe(server.issuer);
    const pub = await register(as, 'none');
    const { tokens } = await obtainTokens(server, as, pub);
    expect(tokens.access_token).toBeTruthy();
  });
});

describe('issuer and base URL on different hosts', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}, { issuerHost: 'localhost' });
  });
  afterAll(() => server.close());

  it('puts token, registration and JWKS on the issuer host and the authorization pages on the base host', async () => {
    const as = await discover(server);
    expect(as.issuer).toBe(server.issuer);
    expect(new URL(as.token_endpoint!).hostname).toBe('localhost');
    expect(new URL(as.registration_endpoint!).hostname).toBe('localhost');
    expect(new URL(as.authorization_endpoint!).hostname).toBe('127.0.0.1');
    const atBase = await fetch(`${server.url}/.well-known/oauth-authorization-server`);
    expect(((await atBase.json()) as { issuer: string }).issuer).toBe(server.issuer);
    const pub = await register(as, 'none');
    const { tokens } = await obtainTokens(server, as, pub);
    await expect(
      server.as.verifyAccessToken(tokens.access_token, { audience: server.resource }),
    ).resolves.toMatchObject({
      iss: server.issuer,
    });
  });
});
