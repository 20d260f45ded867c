import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CredentialManager } from '../../../src/identity/index.js';
import { DelegatedTokens, memorySealedRecords } from '../../../src/state/delegated-tokens.js';

/**
 * The credential manager's user-delegated connections against a real token endpoint (a loopback server that
 * rotates refresh tokens): served from what the authorization server kept, refreshed once for concurrent requests,
 * the rotated refresh token written back, a lost race with another engine process recovered, and the failures
 * (never signed in, no refresh token, no user) named; a connection with its own scopes gets the refresh token
 * narrowed to them, and every refresh of the kept token asks again for the scope granted at sign-in.
 */

const SECRET = 'a-shared-secret-of-the-engine-and-service';
let endpoint: Server;
let tokenUrl: string;
/** The refresh tokens the endpoint received, in order, and the scope each asked for (null: none). */
const refreshes: string[] = [];
const scopes: (string | null)[] = [];
let issued = 0;
/** The refresh tokens the endpoint still accepts (each is spent by its use). */
const live = new Set<string>();

beforeAll(async () => {
  endpoint = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const form = new URLSearchParams(body);
      const presented = form.get('refresh_token') ?? '';
      refreshes.push(presented);
      scopes.push(form.get('scope'));
      const basic = `Basic ${Buffer.from('portcullis:upstream-secret').toString('base64')}`;
      if (
        request.headers.authorization !== basic ||
        form.get('grant_type') !== 'refresh_token' ||
        !live.delete(presented)
      ) {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: 'invalid_grant' }));
        return;
      }
      issued++;
      live.add(`rt-${issued}`);
      // Answer a little later, so concurrent requests overlap.
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ access_token: `at-${issued}`, refresh_token: `rt-${issued}`, expires_in: 600 }),
        );
      }, 50);
    });
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  tokenUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/token`;
});

afterAll(async () => {
  await new Promise((resolve) => endpoint.close(resolve));
});

beforeEach(() => {
  refreshes.length = 0;
  scopes.length = 0;
  live.clear();
  live.add('rt-0');
});

function managerOver(tokens: DelegatedTokens, now: () => number): CredentialManager {
  return new CredentialManager({
    providers: {
      corp: {
        source: {
          type: 'client-credentials',
          tokenUrl,
          clientId: 'portcullis',
          clientSecret: 'upstream-secret',
          clientAuth: 'client_secret_basic',
          resourceAs: 'resource',
          scopes: [],
          parameters: {},
          privateKeyAlgorithm: 'RS256',
          certificateThumbprints: ['x5t'],
        },
        connections: {
          me: { delegated: true, scopes: [] },
          orders: { delegated: true, scopes: ['orders.read', 'orders.write'] },
          service: { resource: 'https://api.example' },
        },
      },
    },
    directory: '.',
    delegated: tokens,
    now,
  });
}

const request = { providerId: 'corp', authorizationId: 'me', user: 'corp|bob' };

describe('user-delegated connections of the credential manager', () => {
  it('serves the kept token, then refreshes once for concurrent requests and writes the rotated tokens back', async () => {
    let now = 1_000_000;
    const tokens = new DelegatedTokens(memorySealedRecords(), SECRET);
    await tokens.write('corp|bob', {
      accessToken: 'at-0',
      refreshToken: 'rt-0',
      expiresAt: now + 600_000,
      obtainedAt: now,
    });
    const manager = managerOver(tokens, () => now);
    expect((await manager.authorization(request)).accessToken).toBe('at-0');
    expect(refreshes).toEqual([]);

    now += 590_000;
    const answers = await Promise.all(Array.from({ length: 5 }, () => manager.authorization(request)));
    expect(answers.map((a) => a.accessToken)).toEqual(Array(5).fill(`at-${issued}`));
    expect(refreshes).toEqual(['rt-0']);
    expect(await tokens.read('corp|bob')).toMatchObject({
      accessToken: `at-${issued}`,
      refreshToken: `rt-${issued}`,
    });
  });

  it('takes the tokens another engine process wrote when it lost the refresh race', async () => {
    let now = 1_000_000;
    const records = memorySealedRecords();
    const tokens = new DelegatedTokens(records, SECRET);
    await tokens.write('corp|bob', {
      accessToken: 'at-0',
      refreshToken: 'rt-0',
      expiresAt: now + 600_000,
      obtainedAt: now,
    });
    const first = managerOver(tokens, () => now);
    const second = managerOver(new DelegatedTokens(records, SECRET), () => now);
    // Both have read the kept record; then both find it near expiry.
    now += 590_000;
    const [a, b] = await Promise.all([first.authorization(request), second.authorization(request)]);
    expect(refreshes).toEqual(['rt-0', 'rt-0']);
    expect(a.accessToken).toBe(b.accessToken);
  });

  it('names why a user has no token: never signed in, no refresh token, no user given', async () => {
    const now = 1_000_000;
    const tokens = new DelegatedTokens(memorySealedRecords(), SECRET);
    await tokens.write('corp|alice', { accessToken: 'at-a', expiresAt: now - 1, obtainedAt: now - 600_000 });
    const manager = managerOver(tokens, () => now);
    await expect(manager.authorization({ ...request, user: 'corp|carol' })).rejects.toThrow(
      'user "corp|carol" has no upstream tokens: they have not signed in through the identity provider',
    );
    await expect(manager.authorization({ ...request, user: 'corp|alice' })).rejects.toThrow(
      /has expired and the provider granted no refresh token \(request offline_access/,
    );
    await expect(manager.authorization({ providerId: 'corp', authorizationId: 'me' })).rejects.toThrow(
      'connection "me" of credential provider "corp" is user-delegated: it needs identity-type="jwt"',
    );
  });

  it('narrows the refresh token to a connection’s scopes, keeping the sign-in token and the granted scope', async () => {
    let now = 1_000_000;
    const tokens = new DelegatedTokens(memorySealedRecords(), SECRET);
    const granted = 'openid offline_access orders.read orders.write';
    await tokens.write('corp|bob', {
      accessToken: 'at-0',
      refreshToken: 'rt-0',
      expiresAt: now + 600_000,
      obtainedAt: now,
      scope: granted,
    });
    const manager = managerOver(tokens, () => now);
    const orders = { ...request, authorizationId: 'orders' };
    const narrowed = await manager.authorization(orders);
    expect(narrowed.accessToken).toBe(`at-${issued}`);
    expect([refreshes, scopes]).toEqual([['rt-0'], ['orders.read orders.write']]);
    // The kept token stays the sign-in's; the rotated refresh token replaces the spent one.
    expect(await tokens.read('corp|bob')).toMatchObject({
      accessToken: 'at-0',
      refreshToken: `rt-${issued}`,
      scope: granted,
    });
    expect((await manager.authorization(request)).accessToken).toBe('at-0');
    expect((await manager.authorization(orders)).accessToken).toBe(narrowed.accessToken);

    // Both near expiry at once: one refresh after the other (each spends the refresh token the previous one got).
    now += 590_000;
    const rotated = issued;
    const [me, again] = await Promise.all([manager.authorization(request), manager.authorization(orders)]);
    expect(me.accessToken).not.toBe('at-0');
    expect(again.accessToken).not.toBe(narrowed.accessToken);
    expect(refreshes).toEqual(['rt-0', `rt-${rotated}`, `rt-${rotated + 1}`]);
    expect(scopes.slice(1).sort()).toEqual([granted, 'orders.read orders.write'].sort());
    expect(await tokens.read('corp|bob')).toMatchObject({
      refreshToken: `rt-${rotated + 2}`,
      scope: granted,
    });
  });
});
