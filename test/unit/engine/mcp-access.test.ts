import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { expandMcpServers } from '../../../src/config/mcp-servers.js';
import { mcpAccessOf } from '../../../src/engine/mcp-access.js';

/** The authorization server's check in front of an MCP server API's own URL (MCP authorization; RFC 8707, 9728). */

const BASE = 'http://127.0.0.1:8080';
const RESOURCE = `${BASE}/weather/mcp`;
const METADATA = `${BASE}/.well-known/oauth-protected-resource/weather/mcp`;
let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let jwk: JWK;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  privateKey = pair.privateKey;
  jwk = { ...(await exportJWK(pair.privateKey)), kid: 'k1', alg: 'ES256' };
});

const config = expandMcpServers(
  parseConfig(
    `apis:
  - { id: weather, type: mcp, urlSuffix: weather, serviceUrl: "http://127.0.0.1:9000/mcp" }
  - { id: courses, urlSuffix: courses, serviceUrl: "http://127.0.0.1:9001" }
products: [{ id: tools, apis: [weather] }]
auth: { issuer: "${BASE}", baseUrl: "${BASE}", dataDir: d }
`,
    'gateway.yaml',
  ),
);

const token = (claims: Record<string, unknown>, audience = RESOURCE, issuer = BASE) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
    .setIssuer(issuer)
    .setAudience(audience)
    .setSubject('alice')
    .setIssuedAt()
    .setExpirationTime('1m')
    .sign(privateKey);

const headers = (authorization?: string) =>
  new Map(authorization === undefined ? [] : [['authorization', [authorization]]]);

describe('mcpAccessOf', () => {
  it('asks for a token with the resource metadata, accepts one for the API, refuses others', async () => {
    const access = mcpAccessOf(config, async () => [jwk])!;
    const scope = 'scope="read:tools-work write:tools-work"';
    expect(await access.check('weather', headers())).toMatchObject({
      kind: 'refused',
      status: 401,
      challenge: `Bearer ${scope}, resource_metadata="${METADATA}"`,
    });
    const good = `Bearer ${await token({ scope: 'read:tools-work' })}`;
    expect(await access.check('weather', headers(good))).toEqual({
      kind: 'allowed',
      authorization: good,
      scopes: ['read:tools-work'],
    });
    for (const bad of [
      await token({ scope: 'read:tools-work' }, `${BASE}/v1/mcp`),
      await token({ scope: 'read:tools-work' }, RESOURCE, 'https://elsewhere.example'),
      `${(await token({ scope: 'read:tools-work' })).slice(0, -4)}AAAA`,
    ]) {
      expect(await access.check('weather', headers(`Bearer ${bad}`))).toMatchObject({
        kind: 'refused',
        status: 401,
        challenge: `Bearer error="invalid_token", ${scope}, resource_metadata="${METADATA}"`,
      });
    }
    expect(
      await access.check('weather', headers(`Bearer ${await token({ scope: 'read:courses-work' })}`)),
    ).toMatchObject({
      kind: 'refused',
      status: 403,
      challenge: `Bearer error="insufficient_scope", ${scope}, resource_metadata="${METADATA}"`,
    });
    // Other APIs are not the authorization server's to guard.
    expect(await access.check('courses', headers())).toEqual({ kind: 'not-protected' });
  });

  it('refuses a Host or Origin the endpoint does not serve before any token check (DNS rebinding), as /v1/mcp does', async () => {
    const guarded = mcpAccessOf(
      {
        ...config,
        mcp: { ...config.mcp!, allowedHosts: ['127.0.0.1:8080'], allowedOrigins: ['https://app.example'] },
      },
      async () => [jwk],
    )!;
    const good = `Bearer ${await token({ scope: 'read:tools-work' })}`;
    const at = (host: string, origin?: string) =>
      new Map([
        ['authorization', [good]],
        [':authority', [host]],
        ...(origin === undefined ? [] : [['origin', [origin]] as [string, string[]]]),
      ]);
    for (const [host, origin] of [
      ['127.0.0.1:8080', undefined],
      ['127.0.0.1:8080', BASE],
      ['127.0.0.1:8080', 'https://app.example'],
    ] as const)
      expect(await guarded.check('weather', at(host, origin))).toEqual({
        kind: 'allowed',
        authorization: good,
        scopes: ['read:tools-work'],
      });
    expect(await guarded.check('weather', at('evil.example'))).toEqual({
      kind: 'refused',
      status: 403,
      message: 'Forbidden: Host "evil.example" is not allowed',
    });
    expect(await guarded.check('weather', at('127.0.0.1:8080', 'http://evil.example'))).toEqual({
      kind: 'refused',
      status: 403,
      message: 'Forbidden: Origin "http://evil.example" is not allowed',
    });
    // Without allowedHosts every Host is served; a foreign Origin is still refused.
    const open = mcpAccessOf(config, async () => [jwk])!;
    expect(await open.check('weather', at('anything.example'))).toMatchObject({ kind: 'allowed' });
    expect(await open.check('weather', at('anything.example', 'http://evil.example'))).toMatchObject({
      status: 403,
    });
  });

  it('checks Host and Origin without auth too (DNS rebinding does not need a token), against the own listeners and host names', async () => {
    const open = mcpAccessOf(
      {
        ...config,
        auth: undefined,
        gateway: { ...config.gateway, http: { host: '0.0.0.0', port: 8080 } },
        apis: config.apis.map((api) =>
          api.id === 'courses' ? { ...api, hostnames: ['api.example.com'] } : api,
        ),
      },
      undefined,
    )!;
    const at = (origin?: string) =>
      new Map([
        [':authority', ['127.0.0.1:8080']],
        ...(origin === undefined ? [] : [['origin', [origin]] as [string, string[]]]),
      ]);
    for (const origin of [
      undefined,
      'http://localhost:8080',
      'http://127.0.0.1:8080',
      'https://api.example.com',
    ])
      expect(await open.check('weather', at(origin))).toEqual({ kind: 'not-protected' });
    for (const origin of ['http://evil.example:8080', 'http://localhost:3000'])
      expect(await open.check('weather', at(origin))).toEqual({
        kind: 'refused',
        status: 403,
        message: `Forbidden: Origin "${origin}" is not allowed`,
      });
    expect(await open.check('courses', at('http://evil.example'))).toEqual({ kind: 'not-protected' });
  });

  it('is off without MCP APIs', () => {
    expect(
      mcpAccessOf({ ...config, apis: config.apis.filter((api) => api.type !== 'mcp') }, async () => [jwk]),
    ).toBeUndefined();
  });
});
