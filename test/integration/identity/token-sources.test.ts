import { createHash, createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  exportPKCS8,
  generateKeyPair,
  type JWK,
  jwtVerify,
  SignJWT,
} from 'jose';
import Provider from 'oidc-provider';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadSigningKeys } from '../../../src/auth/stores/file.js';
import { Identities, IdentityError, identitiesConfigSchema } from '../../../src/identity/index.js';
import { startServer, type TestServer } from '../../processes/auth-server.js';
import { type CertificateWorkshop, certificateWorkshop, type Issued } from '../../processes/certificates.js';

/**
 * Each token source against a real server the test starts: node-oidc-provider for client credentials (secret basic,
 * secret post, private_key_jwt) and the federated exchanges (client assertion; RFC 7523 jwt-bearer as a registered
 * grant), a local server speaking the managed identity protocols (IMDS and App Service), and Portcullis's own
 * authorization server for the `portcullis` source.
 */

const SECRET = 'client-secret-0123456789abcdef';
const EXTERNAL_ISSUER = 'https://cluster.example/oidc';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

let directory: string;
let providerHttp: Server;
let issuer: string;
let clientKey: Awaited<ReturnType<typeof generateKeyPair>>;
let externalKey: Awaited<ReturnType<typeof generateKeyPair>>;
let providerKeys: ReturnType<typeof createRemoteJWKSet>;
let workshop: CertificateWorkshop;
/** An RSA key with its self-signed certificate: the credential of the `certified` client. */
let certified: Issued;
/** The client assertions the provider accepted, in order. */
const assertions: string[] = [];

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'identity-'));
  clientKey = await generateKeyPair('RS256', { extractable: true });
  externalKey = await generateKeyPair('ES256', { extractable: true });
  workshop = await certificateWorkshop();
  certified = await workshop.selfSigned({
    name: 'certified',
    subject: '/CN=portcullis-gateway',
    usage: 'client',
    key: 'rsa',
  });
  let handler: ((req: never, res: never) => void) | undefined;
  providerHttp = createServer((req, res) => handler!(req as never, res as never));
  issuer = await listen(providerHttp);
  const clientJwk = {
    ...(await exportJWK(clientKey.publicKey)),
    kid: 'client-key',
    alg: 'RS256',
    use: 'sig',
  };
  const base = { grant_types: ['client_credentials'], redirect_uris: [], response_types: [] };
  const provider = new Provider(issuer, {
    clients: [
      {
        ...base,
        client_id: 'basic',
        client_secret: SECRET,
        token_endpoint_auth_method: 'client_secret_basic',
        scope: 'orders.read',
      },
      { ...base, client_id: 'post', client_secret: SECRET, token_endpoint_auth_method: 'client_secret_post' },
      {
        ...base,
        client_id: 'keyed',
        jwks: { keys: [clientJwk] },
        token_endpoint_auth_method: 'private_key_jwt',
      },
      { ...base, client_id: 'workload', grant_types: [JWT_BEARER], token_endpoint_auth_method: 'none' },
      {
        ...base,
        client_id: 'certified',
        jwks: {
          keys: [{ ...(await exportJWK(createPublicKey(certified.key))), alg: 'RS256', use: 'sig' }],
        },
        token_endpoint_auth_method: 'private_key_jwt',
      },
    ],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'https://default.example',
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: 'orders.read',
          audience: resource,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 600,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    scopes: ['orders.read'],
    jwks: {
      keys: [
        {
          ...(await exportJWK((await generateKeyPair('RS256', { extractable: true })).privateKey)),
          kid: 'provider',
          alg: 'RS256',
          use: 'sig',
        },
      ],
    },
    cookies: { keys: ['a-test-cookie-key-that-is-long-enough'] },
  } as never);
  // RFC 7523 §2.1: the assertion another issuer signed is the grant itself (the provider trusts that issuer's key).
  // registerGrantType is public API (docs/README.md#registergranttype) that the bundled types leave out.
  (provider as unknown as { registerGrantType: (...args: unknown[]) => void }).registerGrantType(
    JWT_BEARER,
    async (ctx: any) => {
      try {
        await jwtVerify(ctx.oidc.params.assertion, externalKey.publicKey, {
          issuer: EXTERNAL_ISSUER,
          audience: 'api://token-exchange',
        });
      } catch {
        ctx.status = 400;
        ctx.body = { error: 'invalid_grant', error_description: 'the assertion does not verify' };
        return;
      }
      const token = new ctx.oidc.provider.ClientCredentials({ client: ctx.oidc.client, scope: '' });
      ctx.body = { access_token: await token.save(), expires_in: token.expiration, token_type: 'Bearer' };
    },
    ['assertion'],
  );
  (provider as unknown as NodeJS.EventEmitter).on(
    'grant.success',
    (ctx: { oidc: { params?: { client_assertion?: unknown } } }) => {
      const assertion = ctx.oidc.params?.client_assertion;
      if (typeof assertion === 'string') assertions.push(assertion);
    },
  );
  handler = provider.callback() as never;
  providerKeys = createRemoteJWKSet(new URL(`${issuer}/jwks`));
});

afterAll(async () => {
  providerHttp?.close();
  await workshop?.remove();
  await rm(directory, { recursive: true, force: true });
});

const identities = (sources: unknown, extra: Record<string, unknown> = {}) =>
  new Identities({ directory, config: identitiesConfigSchema.parse({ sources, ...extra }) });

/** One client-credentials source, `idp`, at node-oidc-provider's token endpoint. */
const providerClient = (client: Record<string, unknown>) =>
  identities({ idp: { type: 'client-credentials', tokenUrl: `${issuer}/token`, ...client } });

describe('client-credentials against node-oidc-provider', () => {
  it('authenticates with client_secret_basic and asks for the resource (RFC 8707)', async () => {
    const set = providerClient({ clientId: 'basic', clientSecret: SECRET });
    const { token, expiresAt } = await set.token({ resource: 'https://orders.example' });
    const { payload } = await jwtVerify(token, providerKeys, { issuer, audience: 'https://orders.example' });
    expect(payload.client_id).toBe('basic');
    expect(expiresAt).toBeGreaterThan(Date.now() + 500_000);
  });

  it('authenticates with client_secret_post, the secret read from the environment', async () => {
    process.env.TEST_IDENTITY_SECRET = SECRET;
    const set = providerClient({
      clientId: 'post',
      clientAuth: 'client_secret_post',
      clientSecret: { env: 'TEST_IDENTITY_SECRET' },
    });
    const { token } = await set.token({ resource: 'https://orders.example' });
    expect(decodeJwt(token).client_id).toBe('post');
  });

  it('authenticates with private_key_jwt, the key read from a PEM file', async () => {
    await writeFile(path.join(directory, 'client.pem'), await exportPKCS8(clientKey.privateKey));
    const set = providerClient({
      clientId: 'keyed',
      clientAuth: 'private_key_jwt',
      privateKey: { file: 'client.pem' },
      keyId: 'client-key',
    });
    const { token } = await set.token({ resource: 'https://orders.example' });
    const { payload } = await jwtVerify(token, providerKeys, { issuer, audience: 'https://orders.example' });
    expect(payload.client_id).toBe('keyed');
  });

  const sha = (algorithm: string, pem: string) =>
    createHash(algorithm).update(new X509Certificate(pem).raw).digest('base64url');
  const certifiedSource = (extra: Record<string, unknown>) =>
    providerClient({ clientId: 'certified', clientAuth: 'private_key_jwt', ...extra });

  it('puts the x5t of the certificate that comes with the key (one PEM) in the assertion header', async () => {
    await writeFile(path.join(directory, 'certified-both.pem'), `${certified.key}\n${certified.pem}`);
    const set = certifiedSource({ privateKey: { file: 'certified-both.pem' } });
    const { token } = await set.token({ resource: 'https://orders.example' });
    expect(decodeJwt(token).client_id).toBe('certified');
    const header = decodeProtectedHeader(assertions.at(-1)!);
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', x5t: sha('sha1', certified.pem) });
  });

  it('adds x5t#S256 when asked, the certificate in a file of its own', async () => {
    const set = certifiedSource({
      privateKey: { file: certified.keyFile },
      certificate: { file: certified.certificateFile },
      certificateThumbprints: ['x5t', 'x5t#S256'],
    });
    await set.token({ resource: 'https://orders.example' });
    const header = decodeProtectedHeader(assertions.at(-1)!);
    expect(header.x5t).toBe(sha('sha1', certified.pem));
    expect(header['x5t#S256']).toBe(sha('sha256', certified.pem));
  });

  it('refuses a certificate that is not the private key’s, before calling the provider', async () => {
    const stranger = await workshop.selfSigned({
      name: 'stranger',
      subject: '/CN=someone-else',
      usage: 'client',
      key: 'rsa',
    });
    const before = assertions.length;
    const set = certifiedSource({
      privateKey: { file: certified.keyFile },
      certificate: { file: stranger.certificateFile },
    });
    await expect(set.token({ resource: 'https://orders.example' })).rejects.toThrow(
      /the certificate \(subject CN=someone-else\) is not privateKey's: its public key is another/,
    );
    expect(assertions.length).toBe(before);
  });

  it('maps the resource to scope when told to', async () => {
    const set = providerClient({ clientId: 'basic', clientSecret: SECRET, resourceAs: 'scope' });
    // The provider grants the scope for its default resource: the scope went as `scope`, the resource not at all.
    const { token } = await set.token({ resource: 'orders.read' });
    const payload = decodeJwt(token);
    expect(payload.scope).toBe('orders.read');
    expect(payload.aud).toBe('https://default.example');
  });

  it('fails with the endpoint, its status and OAuth error, never the secret', async () => {
    const set = providerClient({ clientId: 'basic', clientSecret: 'wrong-secret' });
    const error = await set.token({ resource: 'https://orders.example' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdentityError);
    expect((error as IdentityError).code).toBe('endpoint-refused');
    expect((error as Error).message).toMatch(
      /identity "idp": http:\/\/127\.0\.0\.1:\d+\/token answered 401 invalid_client/,
    );
    expect((error as Error).message).not.toContain('wrong-secret');
  });
});

describe('federated against node-oidc-provider', () => {
  it('exchanges the projected token as a client assertion (Entra workload identity federation)', async () => {
    // The provider trusts the client's registered key; a projected token signed by it stands for the federated one.
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: 'client-key' })
      .setIssuer('keyed')
      .setSubject('keyed')
      .setAudience(`${issuer}/token`)
      .setJti('projected-1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(clientKey.privateKey);
    await writeFile(path.join(directory, 'projected-token'), `${assertion}\n`);
    const set = identities({
      k8s: {
        type: 'federated',
        tokenUrl: `${issuer}/token`,
        clientId: 'keyed',
        tokenFile: 'projected-token',
      },
    });
    const { token } = await set.token({ resource: 'https://orders.example' });
    const { payload } = await jwtVerify(token, providerKeys, { issuer, audience: 'https://orders.example' });
    expect(payload.client_id).toBe('keyed');
  });

  it('exchanges a token of another issuer with the RFC 7523 jwt-bearer grant, re-reading the file each time', async () => {
    const file = path.join(directory, 'github-oidc-token');
    const external = (subject: string, key = externalKey.privateKey) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer(EXTERNAL_ISSUER)
        .setSubject(subject)
        .setAudience('api://token-exchange')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(key);
    await writeFile(file, await external('system:serviceaccount:shop:orders'));
    const set = identities({
      gh: {
        type: 'federated',
        tokenUrl: `${issuer}/token`,
        clientId: 'workload',
        tokenFile: file,
        grant: 'jwt-bearer',
      },
    });
    expect((await set.token({ resource: 'https://orders.example' })).token).toMatch(/^\S+$/);
    // A token the provider does not trust: the exchange is refused with the provider's own words.
    await writeFile(file, await external('x', (await generateKeyPair('ES256')).privateKey));
    const error = await set.token({ resource: 'https://other.example' }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/answered 400 invalid_grant: the assertion does not verify/);
  });

  it('says which file it could not read', async () => {
    const set = identities({
      k8s: { type: 'federated', tokenUrl: `${issuer}/token`, clientId: 'keyed', tokenFile: 'missing-token' },
    });
    await expect(set.token({ resource: 'https://orders.example' })).rejects.toThrow(
      /identity "k8s": cannot read the token file .*missing-token \(ENOENT\)/,
    );
  });
});

describe('azure-imds against a local server speaking the managed identity protocols', () => {
  let imds: Server;
  let imdsUrl: string;
  const calls: { url: URL; headers: IncomingMessage['headers'] }[] = [];
  let lifetimeSeconds = 3600;
  const answered: () => void = () => {};
  let gate: Promise<void> | undefined;

  beforeAll(async () => {
    imds = createServer(async (req, res) => {
      const url = new URL(req.url!, 'http://imds');
      calls.push({ url, headers: req.headers });
      if (gate) await gate;
      const appService = url.pathname === '/msi/token';
      if (appService ? req.headers['x-identity-header'] !== 'app-secret' : req.headers.metadata !== 'true') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: 'invalid_request',
            error_description: 'Required metadata header not specified',
          }),
        );
        return;
      }
      const clientId = url.searchParams.get('client_id');
      if (clientId === 'unknown-identity') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_request', error_description: 'Identity not found' }));
        return;
      }
      const now = Math.floor(Date.now() / 1000);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          access_token: `token-for:${url.searchParams.get('resource')}:${clientId ?? 'system'}:${calls.length}`,
          // The managed identity endpoints write numbers as strings.
          expires_in: String(lifetimeSeconds),
          expires_on: String(now + lifetimeSeconds),
          resource: url.searchParams.get('resource'),
          token_type: 'Bearer',
        }),
      );
      answered();
    });
    imdsUrl = await listen(imds);
  });
  afterAll(() => imds?.close());
  afterEach(() => {
    calls.length = 0;
    lifetimeSeconds = 3600;
    delete process.env.IDENTITY_ENDPOINT;
    delete process.env.IDENTITY_HEADER;
  });

  it('asks IMDS with Metadata: true, the API version and the resource; client-id selects a user-assigned identity', async () => {
    const set = identities({
      vm: { type: 'azure-imds', endpoint: `${imdsUrl}/metadata/identity/oauth2/token` },
    });
    expect((await set.token({ resource: 'https://vault.azure.net' })).token).toBe(
      'token-for:https://vault.azure.net:system:1',
    );
    expect((await set.token({ resource: 'https://vault.azure.net', clientId: 'user-assigned' })).token).toBe(
      'token-for:https://vault.azure.net:user-assigned:2',
    );
    expect(calls[0]!.url.pathname).toBe('/metadata/identity/oauth2/token');
    expect(calls[0]!.url.searchParams.get('api-version')).toBe('2018-02-01');
    expect(calls[0]!.url.searchParams.has('client_id')).toBe(false);
  });

  it('caches until shortly before expiry, with one fetch for concurrent requests', async () => {
    let now = Date.now();
    const set = new Identities({
      directory,
      now: () => now,
      config: identitiesConfigSchema.parse({
        sources: { vm: { type: 'azure-imds', endpoint: `${imdsUrl}/metadata/identity/oauth2/token` } },
      }),
    });
    let release!: () => void;
    gate = new Promise((resolve) => {
      release = resolve;
    });
    const concurrent = Array.from({ length: 20 }, () =>
      set.token({ resource: 'https://storage.azure.com/' }),
    );
    release();
    gate = undefined;
    const tokens = await Promise.all(concurrent);
    expect(new Set(tokens.map((t) => t.token)).size).toBe(1);
    expect(calls).toHaveLength(1);
    now += 50 * 60 * 1000; // ten minutes left: still served from the cache
    await set.token({ resource: 'https://storage.azure.com/' });
    expect(calls).toHaveLength(1);
    now += 6 * 60 * 1000; // four minutes left: refreshed
    const refreshed = await set.token({ resource: 'https://storage.azure.com/' });
    expect(calls).toHaveLength(2);
    expect(refreshed.token).not.toBe(tokens[0]!.token);
  });

  it('speaks the App Service / Container Apps protocol when IDENTITY_ENDPOINT and IDENTITY_HEADER are set', async () => {
    process.env.IDENTITY_ENDPOINT = `${imdsUrl}/msi/token`;
    process.env.IDENTITY_HEADER = 'app-secret';
    const set = identities({ app: { type: 'azure-imds', clientId: 'app-identity' } });
    const { token } = await set.token({
      resource: 'https://management.azure.com/',
      clientId: 'app-identity',
    });
    expect(token).toBe('token-for:https://management.azure.com/:app-identity:1');
    expect(calls[0]!.url.searchParams.get('api-version')).toBe('2019-08-01');
    expect(calls[0]!.headers.metadata).toBeUndefined();
  });

  it('reports the endpoint refusing an identity it does not have', async () => {
    const set = identities({
      vm: { type: 'azure-imds', endpoint: `${imdsUrl}/metadata/identity/oauth2/token` },
    });
    await expect(
      set.token({ resource: 'https://vault.azure.net', clientId: 'unknown-identity' }),
    ).rejects.toThrow(/answered 400 invalid_request: Identity not found/);
  });

  it('refuses a client-id no source has when the default cannot act for others', async () => {
    const set = providerClient({ clientId: 'basic', clientSecret: SECRET });
    await expect(set.token({ resource: 'https://x.example', clientId: 'someone-else' })).rejects.toThrow(
      'no identity source is named or has clientId "someone-else" (sources: idp)',
    );
  });
});

describe('portcullis against its own authorization server', () => {
  let server: TestServer;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'identity-as-'));
    server = await startServer({ dataDir });
  });
  afterAll(async () => {
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('mints an at+jwt for the gateway with the published keys, and follows a key rotation', async () => {
    const set = new Identities({
      directory,
      authorizationServer: {
        issuer: server.issuer,
        signingKeys: async () => (await loadSigningKeys(dataDir)) ?? [],
      },
    });
    const jwks = createRemoteJWKSet(new URL(`${server.issuer}/v1/jwks`));
    const { token } = await set.token({ resource: 'https://orders.example/api' });
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer: server.issuer,
      audience: 'https://orders.example/api',
      typ: 'at+jwt',
    });
    expect(payload).toMatchObject({ sub: 'portcullis-gateway', client_id: 'portcullis-gateway' });
    expect(protectedHeader.kid).toBe(((await loadSigningKeys(dataDir)) as JWK[])[0]!.kid);
    await server.as.rotateSigningKey();
    const next = await set.token({ resource: 'https://orders.example/other' });
    expect(
      (await jwtVerify(next.token, createRemoteJWKSet(new URL(`${server.issuer}/v1/jwks`)))).protectedHeader
        .kid,
    ).toBe(((await loadSigningKeys(dataDir)) as JWK[])[0]!.kid);
  });
});
