/**
 * Token-endpoint throughput: refresh-token grants/s and authorization-code exchanges/s of Portcullis's
 * authorization server — on its in-memory stores and on the embedded durable store (LMDB, every write flushed
 * before the response) — against node-oidc-provider (in-memory) in the same run, configured equivalently: ES256
 * JWT access tokens (RFC 9068) for one resource, refresh-token rotation, PKCE S256, a public client, all served
 * over loopback HTTP by Koa.
 *
 * The login/consent UI is not part of the measurement: codes and refresh tokens are created before the timed
 * part through each server's own storage (Portcullis stores, oidc-provider models).
 *
 * Run: node --import tsx bench/oauth-grants.ts [seconds per measurement, default 5] [concurrency, default 16]
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import Koa from 'koa';
import Provider from 'oidc-provider';
import { digest } from '../src/auth/crypto.js';
import { type AuthStores, createAuthorizationServer, createMemoryStores } from '../src/auth/index.js';
import { createEmbeddedStores } from '../src/auth/stores/embedded.js';
import { openEmbeddedState } from '../src/state/embedded.js';

const SECONDS = Number(process.argv[2] ?? 5);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const SCOPE = 'read:courses-work write:courses-work';
const REDIRECT = 'http://127.0.0.1:1/cb';
const CLIENT_ID = 'bench-client';
const ACCOUNT = 'alice';

interface Target {
  name: string;
  tokenUrl: string;
  /** Creates one authorization code redeemable with `verifier`. */
  makeCode(verifier: string, challenge: string): Promise<string>;
  /** Creates one refresh token (its own grant). */
  makeRefreshToken(): Promise<string>;
  close(): Promise<void>;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function post(url: string, body: string): Promise<{ status: number; json: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function listen(callback: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(callback);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Portcullis's stores under test, and what to release after the run. */
interface StoreSet {
  stores: AuthStores;
  release(): Promise<void>;
}

function memoryStores(): StoreSet {
  return { stores: createMemoryStores(), release: async () => {} };
}

/** The embedded store in a fresh data directory (on the same disk as the system's temporary files). */
function embeddedStores(): StoreSet {
  const directory = mkdtempSync(path.join(tmpdir(), 'portcullis-bench-lmdb-'));
  const state = openEmbeddedState(directory);
  return {
    stores: createEmbeddedStores(state),
    async release() {
      await state.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

async function portcullis(name: string, storeSet: StoreSet): Promise<Target> {
  const app = new Koa();
  let middleware: Koa.Middleware = async (_ctx, next) => next();
  app.use((ctx, next) => middleware(ctx, next));
  const { server, url } = await listen(app.callback());
  const { stores } = storeSet;
  const as = await createAuthorizationServer({
    issuer: url,
    baseUrl: url,
    resource: [`${url}/v1/mcp`],
    products: ['courses'],
    users: [],
    stores,
    signingKeys: { algorithm: 'ES256' },
    // the benchmark hammers one client from one address; abuse limits are not what is measured
    limits: { clientAuthFailures: 1e9 },
  });
  middleware = as.middleware;
  const now = () => Math.floor(Date.now() / 1000);
  await stores.clients.put({
    clientId: CLIENT_ID,
    issuedAt: now(),
    secretExpiresAt: 0,
    metadata: {
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      application_type: 'native',
    },
  });
  const newGrant = async () => {
    const id = randomBytes(18).toString('base64url');
    await stores.grants.put({
      id,
      clientId: CLIENT_ID,
      sub: ACCOUNT,
      scope: SCOPE.split(' '),
      resource: `${url}/v1/mcp`,
      createdAt: now(),
      expiresAt: now() + 86400,
      revoked: false,
    });
    return id;
  };
  return {
    name,
    tokenUrl: `${url}/v1/token`,
    async makeCode(_verifier, challenge) {
      const code = randomBytes(32).toString('base64url');
      await stores.codes.put({
        id: digest(code),
        clientId: CLIENT_ID,
        redirectUri: REDIRECT,
        codeChallenge: challenge,
        codeChallengeMethod: 'S256',
        scope: SCOPE.split(' '),
        resource: `${url}/v1/mcp`,
        sub: ACCOUNT,
        authTime: now(),
        grantId: await newGrant(),
        expiresAt: now() + 600,
        consumed: false,
      });
      return code;
    },
    async makeRefreshToken() {
      const token = randomBytes(32).toString('base64url');
      await stores.refreshTokens.put({
        id: digest(token),
        grantId: await newGrant(),
        clientId: CLIENT_ID,
        sub: ACCOUNT,
        scope: SCOPE.split(' '),
        resource: `${url}/v1/mcp`,
        issuedAt: now(),
        expiresAt: now() + 86400,
        consumed: false,
      });
      return token;
    },
    async close() {
      await as.close();
      server.closeAllConnections();
      server.close();
      await storeSet.release();
    },
  };
}

/**
 * oidc-provider's bundled development adapter is an LRU capped at 1000 entries, which would evict the
 * pre-created codes; this unbounded Map adapter is the in-memory equivalent of Portcullis's stores.
 */
class MapAdapter {
  static readonly data = new Map<string, Record<string, unknown>>();
  static readonly grants = new Map<string, string[]>();
  constructor(private readonly model: string) {}
  key(id: string) {
    return `${this.model}:${id}`;
  }
  async upsert(id: string, payload: Record<string, unknown>) {
    MapAdapter.data.set(this.key(id), payload);
    const grantId = payload.grantId as string | undefined;
    if (grantId) MapAdapter.grants.set(grantId, [...(MapAdapter.grants.get(grantId) ?? []), this.key(id)]);
  }
  async find(id: string) {
    return MapAdapter.data.get(this.key(id));
  }
  async findByUid(uid: string) {
    for (const [key, value] of MapAdapter.data)
      if (key.startsWith(`${this.model}:`) && value.uid === uid) return value;
    return undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume(id: string) {
    const value = MapAdapter.data.get(this.key(id));
    if (value) value.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    MapAdapter.data.delete(this.key(id));
  }
  async revokeByGrantId(grantId: string) {
    for (const key of MapAdapter.grants.get(grantId) ?? []) MapAdapter.data.delete(key);
    MapAdapter.grants.delete(grantId);
  }
}

async function oidcProvider(): Promise<Target> {
  // Reserve the port first: the issuer (and so the resource) must be known when the provider is built.
  let callback: http.RequestListener = (_req, res) => res.end();
  const { server, url } = await listen((req, res) => callback(req, res));
  const resource = `${url}/v1/mcp`;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const provider = new Provider(url, {
    adapter: MapAdapter,
    clients: [
      {
        client_id: CLIENT_ID,
        token_endpoint_auth_method: 'none',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        application_type: 'native',
        // only ES256 keys are configured (its RS256 default would need an RSA key)
        id_token_signed_response_alg: 'ES256',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'bench', alg: 'ES256', use: 'sig' }] },
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    scopes: SCOPE.split(' '),
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: SCOPE,
          audience: resource,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 3600,
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
    pkce: { required: () => true },
    rotateRefreshToken: true,
    issueRefreshToken: async () => true,
    ttl: { AccessToken: 3600, AuthorizationCode: 600, RefreshToken: 86400, Grant: 86400 },
  });
  provider.on('server_error', (_ctx, err) => console.error('oidc-provider server_error', err));
  callback = provider.callback();
  const client = await provider.Client.find(CLIENT_ID);
  const newGrant = async () => {
    const grant = new provider.Grant({ accountId: ACCOUNT, clientId: CLIENT_ID });
    grant.addResourceScope(resource, SCOPE);
    return grant.save();
  };
  return {
    name: 'oidc-provider',
    tokenUrl: `${url}/token`,
    async makeCode(_verifier, challenge) {
      const code = new provider.AuthorizationCode({
        accountId: ACCOUNT,
        client,
        grantId: await newGrant(),
        scope: SCOPE,
        resource,
        redirectUri: REDIRECT,
        codeChallenge: challenge,
        codeChallengeMethod: 'S256',
        authTime: Math.floor(Date.now() / 1000),
      });
      return code.save();
    },
    async makeRefreshToken() {
      const rt = new provider.RefreshToken({
        accountId: ACCOUNT,
        client,
        grantId: await newGrant(),
        scope: SCOPE,
        resource,
        gty: 'authorization_code',
        rotations: 0,
        authTime: Math.floor(Date.now() / 1000),
      });
      return rt.save();
    },
    async close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Runs `worker` on CONCURRENCY lanes for SECONDS and returns completed operations per second. */
async function measure(worker: (lane: number) => Promise<void>, seconds = SECONDS): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, lane) => {
      while (performance.now() < deadline) {
        await worker(lane);
        done += 1;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

async function refreshRate(target: Target, seconds = SECONDS): Promise<number> {
  const chains = await Promise.all(Array.from({ length: CONCURRENCY }, () => target.makeRefreshToken()));
  // warm-up, and a check that the flow really works before it is timed
  for (let lane = 0; lane < CONCURRENCY; lane++) chains[lane] = await refreshOnce(target, chains[lane]!);
  return measure(async (lane) => {
    chains[lane] = await refreshOnce(target, chains[lane]!);
  }, seconds);
}

async function refreshOnce(target: Target, token: string): Promise<string> {
  const body = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: token,
    client_id: CLIENT_ID,
  }).toString();
  const { status, json } = await post(target.tokenUrl, body);
  if (status !== 200 || !json.refresh_token || !json.access_token) {
    throw new Error(`${target.name} refresh failed: ${status} ${JSON.stringify(json)}`);
  }
  return json.refresh_token;
}

async function codeRate(target: Target): Promise<number> {
  // Codes are created ahead of time so only the exchange is timed; a generous pool per lane.
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const pool: string[] = [];
  const estimate = Math.ceil(SECONDS * 4000);
  // In batches: a durable store flushes once for the writes committed together.
  for (let i = 0; i < estimate; i += 100)
    pool.push(
      ...(await Promise.all(Array.from({ length: 100 }, () => target.makeCode(verifier, challenge)))),
    );
  const exchange = async () => {
    const code = pool.pop();
    if (!code) throw new Error(`${target.name}: code pool exhausted; raise the estimate`);
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: CLIENT_ID,
    }).toString();
    const { status, json } = await post(target.tokenUrl, body);
    if (status !== 200 || !json.access_token)
      throw new Error(`${target.name} exchange failed: ${status} ${JSON.stringify(json)}`);
  };
  for (let i = 0; i < CONCURRENCY; i++) await exchange();
  return measure(exchange);
}

async function main() {
  const memory = await portcullis('portcullis memory', memoryStores());
  const embedded = await portcullis('portcullis embedded', embeddedStores());
  const baseline = await oidcProvider();
  const targets = [memory, embedded, baseline];
  const rows: [string, number[]][] = [];
  try {
    // A warm-up round for each (JIT, connection pool), then alternate the order so none always runs on a
    // warmer process.
    for (const target of targets) await refreshRate(target, 1);
    const refresh = [];
    for (const target of targets) refresh.push(await refreshRate(target));
    rows.push(['refresh_token grants/s', refresh]);
    const code = [];
    for (const target of [...targets].reverse()) code.unshift(await codeRate(target));
    rows.push(['authorization_code exchanges/s', code]);
  } finally {
    for (const target of targets) await target.close();
    agent.destroy();
  }
  console.log(
    `oauth grants: ${SECONDS}s per measurement, concurrency ${CONCURRENCY}, ES256 JWT access tokens, node ${process.version}`,
  );
  for (const [name, [ours, durable, theirs]] of rows) {
    console.log(
      `  ${name.padEnd(32)} portcullis memory ${ours!.toFixed(0).padStart(7)}   embedded ${durable!.toFixed(0).padStart(7)}   ` +
        `oidc-provider ${theirs!.toFixed(0).padStart(7)}   ratio memory ${(ours! / theirs!).toFixed(2)}, embedded ${(durable! / theirs!).toFixed(2)}`,
    );
  }
}

await main();
