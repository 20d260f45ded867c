import { describe, expect, it } from 'vitest';
import { hashPassword } from '../../../src/auth/index.js';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfig } from '../../../src/config/load.js';

const hash = await hashPassword('pw');

function problems(text: string): string[] {
  try {
    parseConfig(text, 'gw.yaml');
  } catch (error) {
    if (error instanceof ConfigError) return error.message.split('\n');
    throw error;
  }
  return [];
}

const base = (auth: string, mcp = '') => `products: [{ id: courses }]
auth:
  issuer: https://auth.example.com
  baseUrl: https://mcp.example.com
${auth}${mcp}`;

describe('auth and mcp configuration', () => {
  it('accepts a full section and fills in the defaults', () => {
    const config = parseConfig(
      base(
        `  users: [{ username: alice, passwordHash: "${hash}" }]\n`,
        'mcp: { allowedOrigins: [https://app.example.com] }\n',
      ),
      'gw.yaml',
    );
    expect(config.auth).toEqual({
      issuer: 'https://auth.example.com',
      baseUrl: 'https://mcp.example.com',
      users: [{ username: 'alice', passwordHash: hash }],
      accessTokenTtlSeconds: 3600,
      refreshTokenTtlSeconds: 30 * 24 * 3600,
      codeTtlSeconds: 60,
      sessionTtlSeconds: 8 * 3600,
      allowPlainPkce: true,
      cookieSecure: true,
      clientMetadataDocuments: {
        enabled: true,
        allowedNetworks: [],
        timeoutMs: 5000,
        maxBytes: 5120,
        maxCacheSeconds: 86400,
      },
    });
    expect(config.mcp).toEqual({
      allowedOrigins: ['https://app.example.com'],
      responseMode: 'json',
      pageSize: 100,
      maxBatchSize: 50,
      batchConcurrency: 4,
      maxConcurrentRequestsPerSession: 8,
      serviceTokenTtlSeconds: 60,
    });
  });

  it.each([
    ['  colour: red\n', 'gw.yaml:5:3: auth.colour: unknown key "colour"'],
    [
      '  users: [{ username: alice, passwordHash: "md5$abc" }]\n',
      // A password hash is a credential: the error says what is wrong, never what was found.
      'gw.yaml:5:30: auth.users[0].passwordHash: must look like scrypt$N$r$p$salt$key (make one with `portcullis hash-password`)',
    ],
    [
      `  users:\n    - { username: a, passwordHash: "${hash}" }\n    - { username: a, passwordHash: "${hash}" }\n`,
      'gw.yaml:7:9: auth.users[1].username: duplicate username "a" (also users[0]), got',
    ],
    ['  codeTtlSeconds: 601\n', 'gw.yaml:5:3: auth.codeTtlSeconds: must be at most 600, got 601'],
    [
      '  clientMetadataDocuments: { allowedNetworks: [127.0.0.1/40] }\n',
      'gw.yaml:5:48: auth.clientMetadataDocuments.allowedNetworks[0]: must be a CIDR range such as 127.0.0.1/32, got "127.0.0.1/40"',
    ],
    [
      '  clientMetadataDocuments: { fetchHttp: true }\n',
      'gw.yaml:5:30: auth.clientMetadataDocuments.fetchHttp: unknown key "fetchHttp"',
    ],
    [
      '  signingKeys: { algorithm: HS256 }\n',
      'gw.yaml:5:18: auth.signingKeys.algorithm: must be one of "ES256", "RS256", "EdDSA", got "HS256"',
    ],
  ])('refuses %j with file:line:col, path and what was found', (auth, expected) => {
    expect(problems(base(auth))[0]).toContain(expected.replace(/, got$/, ''));
  });

  it('refuses an issuer with a path (Envoy would not route it), plain http off loopback, and a query', () => {
    const text = `products: [{ id: courses }]
auth:
  issuer: https://auth.example.com/tenant1
  baseUrl: http://mcp.example.com
mcp:
  allowedOrigins: [https://app.example.com/path]
`;
    expect(problems(text)).toEqual([
      'gw.yaml:3:3: auth.issuer: must be an origin without a path (Envoy routes /v1/… and /.well-known/… of every host to the service), got "https://auth.example.com/tenant1"',
      'gw.yaml:4:3: auth.baseUrl: must use https (http is allowed only on a loopback host, for development), got "http://mcp.example.com"',
      'gw.yaml:6:20: mcp.allowedOrigins[0]: must be a bare origin such as https://app.example.com (no path, no trailing slash), got "https://app.example.com/path"',
    ]);
  });

  it('allows plain http on loopback hosts for development', () => {
    const config = parseConfig(
      'products: [{ id: c }]\nauth: { issuer: "http://127.0.0.1:8080", baseUrl: "http://localhost:8080" }\n',
      'gw.yaml',
    );
    expect(config.auth?.issuer).toBe('http://127.0.0.1:8080');
  });
});
