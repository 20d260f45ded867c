import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingLogger } from '../../doubles/logger.js';
import {
  createTokenKit,
  FakeCaller,
  ISSUER,
  initializeMessage,
  MutableCatalog,
  openSession,
  type RunningApp,
  sampleOperations,
  send,
  startApp,
  type TokenKit,
} from '../../doubles/mcp.js';

let kit: TokenKit;
let app: RunningApp;
let prm: string;
const logged = recordingLogger();
const logs = logged.lines;
/** What a 401 asks for when the request calls no tool: the read scopes (the sample has one product with reads). */
const READ_SCOPES = 'read:courses-work';

beforeAll(async () => {
  kit = await createTokenKit();
  app = await startApp(() => ({
    issuer: ISSUER,
    verifier: kit.verifier,
    catalog: new MutableCatalog(sampleOperations()),
    caller: new FakeCaller(),
    serverInfo: { name: 'portcullis', version: '0.1.0', title: 'Portcullis tools' },
    allowedOrigins: ['https://inspector.example'],
    logger: logged.logger,
  }));
  prm = `${app.base}/.well-known/oauth-protected-resource/v1/mcp`;
});
afterAll(() => app.close());

const token = (claims: Record<string, unknown> = {}, options?: Parameters<TokenKit['sign']>[1]) =>
  kit.sign({ sub: 'alice', client_id: 'c1', scope: 'read:courses-work', aud: app.url, ...claims }, options);

describe('401 for a missing or unacceptable token', () => {
  it('no token: challenge with resource_metadata and scope, no error code', async () => {
    const res = await send(app.url, initializeMessage());
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer scope="${READ_SCOPES}", resource_metadata="${prm}"`,
    );
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({
      error: 'unauthorized',
      error_description: 'A bearer access token is required',
    });
  });

  it('another scheme counts as no token', async () => {
    const res = await send(app.url, initializeMessage(), { headers: { authorization: 'Basic YTpi' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer scope="${READ_SCOPES}", resource_metadata="${prm}"`,
    );
  });

  const invalid = () =>
    `Bearer error="invalid_token", error_description="The access token is invalid, expired, revoked or not for this resource", scope="${READ_SCOPES}", resource_metadata="${prm}"`;

  // The reason is logged for operators; the client sees one uniform answer.
  const cases: [string, string, () => Promise<string>][] = [
    ['not token68 syntax', 'malformed bearer token', async () => 'not a jwt'],
    ['not a JWT', 'Invalid Compact JWS', async () => 'notajwt'],
    ['signed by another key', 'signature verification failed', () => token({}, { key: 'other' })],
    [
      'wrong audience',
      'unexpected "aud" claim value',
      () => token({ aud: 'https://elsewhere.example/v1/mcp' }),
    ],
    ['no audience', 'missing required "aud" claim', () => token({ aud: undefined })],
    ['audience with a trailing slash', 'unexpected "aud" claim value', () => token({ aud: `${app.url}/` })],
    [
      'expired',
      '"exp" claim timestamp check failed',
      () => token({}, { expiresIn: Math.floor(Date.now() / 1000) - 10 }),
    ],
    ['another issuer', 'unexpected "iss" claim value', () => token({}, { issuer: 'https://evil.example' })],
    ['no subject', 'missing required "sub" claim', () => token({ sub: undefined })],
    [
      'revoked',
      'token revoked',
      async () => {
        const t = await token();
        const jti = JSON.parse(Buffer.from(t.split('.')[1]!, 'base64url').toString()).jti;
        kit.revoked.add(jti);
        return t;
      },
    ],
  ];
  it.each(cases)('%s → 401 invalid_token', async (_name, reason, make) => {
    logs.length = 0;
    const res = await send(app.url, initializeMessage(), { token: await make() });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(invalid());
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({
      error: 'invalid_token',
      error_description: 'The access token is invalid, expired, revoked or not for this resource',
    });
    expect(logs).toEqual([{ level: 'info', message: 'mcp: 401 invalid_token', fields: { reason } }]);
  });

  // MCP 2025-11-25 scope selection: the challenge names what the request at hand needs, not every scope.
  it('the challenge asks for the scope of the tool a tools/call names, else the read scopes', async () => {
    const call = (name: string) => ({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name, arguments: {} },
    });
    const challengeFor = async (body: unknown, method = 'POST') => {
      const res = await send(app.url, body, { method, accept: 'application/json, text/event-stream' });
      expect(res.status).toBe(401);
      return /scope="([^"]*)"/.exec(res.headers.get('www-authenticate') ?? '')?.[1];
    };
    expect(await challengeFor(call('createCourse'))).toBe('write:courses-work');
    expect(await challengeFor(call('getCourse'))).toBe('read:courses-work');
    expect(await challengeFor(call('deleteApiAdminById'))).toBe(READ_SCOPES);
    expect(await challengeFor([call('createCourse'), call('listCourses')])).toBe(
      'read:courses-work write:courses-work',
    );
    expect(await challengeFor({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBe(READ_SCOPES);
    expect(await challengeFor('{"jsonrpc": not json')).toBe(READ_SCOPES);
    expect(await challengeFor(undefined, 'GET')).toBe(READ_SCOPES);
  });

  it('a token in the query string is not accepted', async () => {
    const res = await send(`${app.url}?access_token=${await token()}`, initializeMessage());
    expect(res.status).toBe(401);
  });

  it('GET and DELETE need the token too', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await send(app.url, undefined, { method, accept: 'text/event-stream' });
      expect(res.status).toBe(401);
    }
  });

  it('a valid token passes, with or without the trailing slash on the path', async () => {
    for (const url of [app.url, `${app.url}/`]) {
      const res = await send(url, initializeMessage(), { token: await token() });
      expect(res.status).toBe(200);
    }
  });
});

describe('403 insufficient_scope', () => {
  it('calling a tool the token does not grant names the needed scope (plus the granted ones)', async () => {
    const t = await token();
    const session = await openSession(app.url, t);
    const res = await send(
      app.url,
      { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'createCourse', arguments: {} } },
      { token: t, session, version: '2025-11-25' },
    );
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", error_description="This call requires scope write:courses-work", scope="read:courses-work write:courses-work", resource_metadata="${prm}"`,
    );
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32000, message: 'Forbidden: the access token lacks scope write:courses-work' },
    });
  });
});

describe('protected resource metadata (RFC 9728)', () => {
  const expected = () => ({
    resource: app.url,
    authorization_servers: [ISSUER],
    scopes_supported: ['read:courses-work', 'write:admin-work', 'write:courses-work'],
    bearer_methods_supported: ['header'],
    resource_name: 'Portcullis tools',
  });

  it.each(['/.well-known/oauth-protected-resource/v1/mcp', '/.well-known/oauth-protected-resource'])(
    'served unauthenticated at %s',
    async (path) => {
      const res = await fetch(`${app.base}${path}`, { headers: { 'mcp-protocol-version': '2025-11-25' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await res.json()).toEqual(expected());
    },
  );

  it('unknown well-known paths under it are 404, other paths are left to the next middleware', async () => {
    const res = await fetch(`${app.base}/.well-known/oauth-protected-resource/other`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'not_found' });
    const other = await fetch(`${app.base}/.well-known/oauth-authorization-server`);
    expect([other.status, await other.text()]).toEqual([404, 'not here']);
  });

  it('answers a CORS preflight and refuses writes', async () => {
    const pre = await fetch(`${app.base}/.well-known/oauth-protected-resource`, {
      method: 'OPTIONS',
      headers: { origin: 'https://any.example', 'access-control-request-method': 'GET' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    const post = await fetch(`${app.base}/.well-known/oauth-protected-resource`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });
});

describe('CORS and Origin', () => {
  it('answers OPTIONS before authentication, allowing the MCP headers', async () => {
    const res = await fetch(app.url, {
      method: 'OPTIONS',
      headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST' },
    });
    expect(res.status).toBe(204);
    expect(
      Object.fromEntries([...res.headers].filter(([k]) => k.startsWith('access-control') || k === 'vary')),
    ).toEqual({
      'access-control-allow-origin': 'https://inspector.example',
      'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
      'access-control-allow-headers':
        'Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID',
      'access-control-expose-headers': 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version',
      'access-control-max-age': '600',
      vary: 'Origin',
    });
  });

  it('allows the Mcp-Param-* headers a preflight asks for (x-mcp-header arguments), and no other extra one', async () => {
    const res = await fetch(app.url, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://inspector.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers':
          'authorization,mcp-method,mcp-param-x-trace,x-other,Mcp-Param-Region',
      },
    });
    expect(res.headers.get('access-control-allow-headers')).toBe(
      'Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID, mcp-param-x-trace, mcp-param-region',
    );
  });

  it('exposes WWW-Authenticate on a 401 to an allowed origin', async () => {
    const res = await send(app.url, initializeMessage(), {
      headers: { origin: 'https://inspector.example' },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://inspector.example');
    expect(res.headers.get('access-control-expose-headers')).toBe(
      'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version',
    );
  });

  it('an Origin that is not allowed is 403, before authentication', async () => {
    const res = await send(app.url, initializeMessage(), {
      token: await token(),
      headers: { origin: 'https://evil.example' },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Forbidden: Origin "https://evil.example" is not allowed' },
    });
  });

  it('the endpoint own origin is allowed', async () => {
    const res = await send(app.url, initializeMessage(), {
      token: await token(),
      headers: { origin: app.base },
    });
    expect(res.status).toBe(200);
  });
});

describe('Host allow-list', () => {
  it('a Host outside allowedHosts is 403', async () => {
    const local = await startApp((url) => ({
      issuer: ISSUER,
      verifier: kit.verifier,
      catalog: new MutableCatalog(sampleOperations()),
      caller: new FakeCaller(),
      serverInfo: { name: 'p', version: '1' },
      allowedHosts: [new URL(url).host],
    }));
    try {
      const t = await kit.sign({ sub: 'a', client_id: 'c', scope: '', aud: local.url });
      expect((await send(local.url, initializeMessage(), { token: t })).status).toBe(200);
      // fetch cannot forge Host; a raw request can.
      const { request } = await import('node:http');
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          local.url,
          { method: 'POST', headers: { host: 'evil.example', 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(initializeMessage()));
      });
      expect(status).toBe(403);
    } finally {
      await local.close();
    }
  });

  // Issue 13: `Origin: http://127.0.0.1:8080` was refused although 127.0.0.1:8080 is in mcp.allowedHosts.
  it('accepts an Origin whose host[:port] is in allowedHosts, and no other', async () => {
    const local = await startApp((url) => ({
      issuer: ISSUER,
      verifier: kit.verifier,
      catalog: new MutableCatalog(sampleOperations()),
      caller: new FakeCaller(),
      serverInfo: { name: 'p', version: '1' },
      allowedHosts: [new URL(url).host, 'gateway.test:8080', 'LocalHost'],
    }));
    try {
      const t = await kit.sign({ sub: 'a', client_id: 'c', scope: '', aud: local.url });
      const statusFor = async (origin: string) => {
        const res = await send(local.url, initializeMessage(), { token: t, headers: { origin } });
        await res.arrayBuffer();
        return [res.status, res.headers.get('access-control-allow-origin')];
      };
      for (const origin of ['http://gateway.test:8080', 'https://gateway.test:8080', 'http://localhost']) {
        expect(await statusFor(origin), origin).toEqual([200, origin]);
      }
      for (const origin of [
        'http://gateway.test:9999',
        'http://gateway.test',
        'http://evil.example',
        'null',
        'ftp://gateway.test:8080',
      ]) {
        expect(await statusFor(origin), origin).toEqual([403, null]);
      }
    } finally {
      await local.close();
    }
  });
});
