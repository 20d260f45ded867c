import { describe, expect, it } from 'vitest';
import type {
  AuthorizationCodeRecord,
  AuthStores,
  ClientRecord,
  GrantRecord,
  InteractionRecord,
  RefreshTokenRecord,
  SessionRecord,
} from '../../src/auth/stores/types.js';

/**
 * One behavioural specification for every AuthStores implementation (in-process, embedded, Redis): they must be
 * interchangeable behind the authorization server. A test file calls authStoreConformance once per backend with
 * a factory; each case gets a fresh store set on a fake clock.
 */

/** The fake clock's start, epoch seconds. */
export const START = 1_800_000_000;

/** A store set on a fake clock (epoch seconds) that a case moves forward. */
export interface Backend {
  stores: AuthStores;
  now(): number;
  advance(seconds: number): void;
  /**
   * A second store set on the same storage and clock, as another process would open it (another Redis
   * connection, the same data directory opened again); absent for a backend that lives in one process.
   */
  twin?(): AuthStores;
}

const client = (id: string): ClientRecord => ({
  clientId: id,
  secretDigest: 'c2VjcmV0LWRpZ2VzdA',
  issuedAt: START,
  secretExpiresAt: 0,
  metadata: {
    redirect_uris: ['https://app.example/cb'],
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    application_type: 'web',
    client_name: 'App',
  },
});

const code = (id: string, expiresAt = START + 60): AuthorizationCodeRecord => ({
  id,
  clientId: 'c1',
  redirectUri: undefined,
  codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  codeChallengeMethod: 'S256',
  scope: ['read:courses-work'],
  resource: 'https://mcp.example/v1/mcp',
  sub: 'alice',
  authTime: START,
  grantId: 'g1',
  expiresAt,
  consumed: false,
});

const refresh = (id: string, expiresAt = START + 3600): RefreshTokenRecord => ({
  id,
  grantId: 'g1',
  clientId: 'c1',
  sub: 'alice',
  scope: ['read:courses-work', 'write:courses-work'],
  resource: 'https://mcp.example/v1/mcp',
  issuedAt: START,
  expiresAt,
  consumed: false,
});

const grant = (id: string, expiresAt = START + 86_400): GrantRecord => ({
  id,
  clientId: 'c1',
  sub: 'alice',
  scope: ['read:courses-work'],
  resource: 'https://mcp.example/v1/mcp',
  createdAt: START,
  expiresAt,
  revoked: false,
});

/**
 * Registers the specification's describe blocks for one backend. `sharesStorage`: the backend's twin() opens a
 * second instance on the same storage, and the cases for two processes run.
 */
export function authStoreConformance(name: string, make: () => Backend, sharesStorage = false): void {
  describe(`${name}: clients`, () => {
    it('stores, returns and deletes a registration', async () => {
      const { stores } = make();
      await stores.clients.put(client('c1'));
      expect(await stores.clients.get('c1')).toEqual(client('c1'));
      expect(await stores.clients.get('c2')).toBeUndefined();
      await stores.clients.put({ ...client('c1'), secretExpiresAt: START + 10 });
      expect((await stores.clients.get('c1'))?.secretExpiresAt).toBe(START + 10);
      expect(await stores.clients.delete('c1')).toBe(true);
      expect(await stores.clients.delete('c1')).toBe(false);
      expect(await stores.clients.get('c1')).toBeUndefined();
    });

    it('hands out records that cannot change stored state', async () => {
      const { stores } = make();
      const record = client('c1');
      await stores.clients.put(record);
      record.metadata.redirect_uris.push('https://evil.example/cb');
      const read = await stores.clients.get('c1');
      expect(read?.metadata.redirect_uris).toEqual(['https://app.example/cb']);
      expect(() => read!.metadata.redirect_uris.push('https://evil.example/cb')).toThrow(TypeError);
    });
  });

  for (const [kind, make1] of [
    ['codes', (id: string, exp?: number) => code(id, exp)],
    ['refresh tokens', (id: string, exp?: number) => refresh(id, exp)],
  ] as const) {
    const one = (b: Backend) =>
      (kind === 'codes' ? b.stores.codes : b.stores.refreshTokens) as typeof b.stores.codes;
    const record = make1 as (id: string, exp?: number) => AuthorizationCodeRecord;

    describe(`${name}: ${kind}`, () => {
      it('are consumed exactly once and found afterwards as consumed (replay detection)', async () => {
        const backend = make();
        await one(backend).put(record('d1'));
        expect(await one(backend).find('d1')).toEqual(record('d1'));
        expect(await one(backend).consume('d1')).toBe(true);
        expect(await one(backend).consume('d1')).toBe(false);
        expect(await one(backend).find('d1')).toEqual({ ...record('d1'), consumed: true });
        expect(await one(backend).consume('unknown')).toBe(false);
        expect(await one(backend).find('unknown')).toBeUndefined();
      });

      it('let one of many concurrent redemptions win', async () => {
        const backend = make();
        await one(backend).put(record('d2'));
        const results = await Promise.all(Array.from({ length: 25 }, () => one(backend).consume('d2')));
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it('are gone once expired or deleted', async () => {
        const backend = make();
        await one(backend).put(record('d3', START + 60));
        await one(backend).put(record('d4', START + 600));
        await one(backend).put(record('d5', START));
        expect(await one(backend).find('d5')).toBeUndefined();
        backend.advance(60);
        expect(await one(backend).find('d3')).toBeUndefined();
        expect(await one(backend).consume('d3')).toBe(false);
        expect((await one(backend).find('d4'))?.id).toBe('d4');
        await one(backend).delete('d4');
        expect(await one(backend).find('d4')).toBeUndefined();
        expect(await one(backend).consume('d4')).toBe(false);
      });
    });
  }

  describe(`${name}: grants`, () => {
    it('record access tokens until revoked, and revocation returns those still alive', async () => {
      const backend = make();
      const { grants } = backend.stores;
      await grants.put(grant('g1'));
      expect(await grants.get('g1')).toEqual(grant('g1'));
      expect(await grants.addAccessToken('g1', 'short', START + 10)).toBe(true);
      expect(await grants.addAccessToken('g1', 'long', START + 3600)).toBe(true);
      backend.advance(10);
      expect(await grants.revoke('g1')).toEqual([{ jti: 'long', expiresAt: START + 3600 }]);
      expect(await grants.get('g1')).toEqual({ ...grant('g1'), revoked: true });
      expect(await grants.addAccessToken('g1', 'late', START + 3600)).toBe(false);
      expect(await grants.revoke('g1')).toEqual([]);
    });

    it('refuse tokens for unknown or expired grants', async () => {
      const backend = make();
      const { grants } = backend.stores;
      expect(await grants.addAccessToken('nope', 'j', START + 60)).toBe(false);
      expect(await grants.revoke('nope')).toEqual([]);
      expect(await grants.get('nope')).toBeUndefined();
      await grants.put(grant('g2', START + 100));
      backend.advance(100);
      expect(await grants.get('g2')).toBeUndefined();
      expect(await grants.addAccessToken('g2', 'j', START + 3600)).toBe(false);
    });

    it('never lose a token issued while the grant is being revoked', async () => {
      const { stores } = make();
      await stores.grants.put(grant('g3'));
      const adds = Array.from({ length: 20 }, (_, i) =>
        stores.grants.addAccessToken('g3', `j${i}`, START + 3600).then((ok) => (ok ? `j${i}` : undefined)),
      );
      const revoked = stores.grants.revoke('g3');
      const issued = (await Promise.all(adds)).filter((j) => j !== undefined);
      // Every token the grant accepted is on the list the revocation denylists; none slips in after.
      expect((await revoked).map((t) => t.jti).sort()).toEqual(issued.sort());
      expect(await stores.grants.addAccessToken('g3', 'after', START + 3600)).toBe(false);
    });
  });

  describe(`${name}: access-token denylist`, () => {
    it('remembers a revoked jti until the token would have expired', async () => {
      const backend = make();
      const { denylist } = backend.stores;
      await denylist.add('j1', START + 30);
      await denylist.add('j0', START);
      expect(await denylist.has('j1')).toBe(true);
      expect(await denylist.has('j0')).toBe(false);
      expect(await denylist.has('j2')).toBe(false);
      backend.advance(30);
      expect(await denylist.has('j1')).toBe(false);
    });
  });

  describe(`${name}: sessions, interactions and consents`, () => {
    it('keep a value until it expires or is deleted', async () => {
      const backend = make();
      const { sessions, consents } = backend.stores;
      const session: SessionRecord = { id: 'sess-1', sub: 'alice', authTime: START, expiresAt: START + 60 };
      await sessions.set('sess-1', session, session.expiresAt);
      expect(await sessions.get('sess-1')).toEqual(session);
      expect(await sessions.get('sess-2')).toBeUndefined();
      await sessions.set('sess-1', { ...session, sub: 'bob' }, session.expiresAt);
      expect((await sessions.get('sess-1'))?.sub).toBe('bob');
      await consents.set('alice\nc1', { scope: ['read:courses-work'], resources: ['r'] }, START + 600);
      backend.advance(60);
      expect(await sessions.get('sess-1')).toBeUndefined();
      expect(await consents.get('alice\nc1')).toEqual({ scope: ['read:courses-work'], resources: ['r'] });
      expect(await consents.delete('alice\nc1')).toBe(true);
      expect(await consents.delete('alice\nc1')).toBe(false);
      expect(await consents.get('alice\nc1')).toBeUndefined();
    });

    it('do not store a value that is already expired', async () => {
      const { stores } = make();
      await stores.interactions.set('i1', { x: 1 } as never, START);
      expect(await stores.interactions.get('i1')).toBeUndefined();
    });
  });

  describe(`${name}: counters`, () => {
    it('count in a fixed window that starts at the first hit', async () => {
      const backend = make();
      const { counters } = backend.stores;
      expect(await counters.get('login:alice')).toBeUndefined();
      expect(await counters.increment('login:alice', 60)).toEqual({ count: 1, resetAt: START + 60 });
      backend.advance(30);
      expect(await counters.increment('login:alice', 60)).toEqual({ count: 2, resetAt: START + 60 });
      expect(await counters.get('login:alice')).toEqual({ count: 2, resetAt: START + 60 });
      backend.advance(30);
      expect(await counters.get('login:alice')).toBeUndefined();
      expect(await counters.increment('login:alice', 60)).toEqual({ count: 1, resetAt: START + 120 });
      await counters.reset('login:alice');
      expect(await counters.get('login:alice')).toBeUndefined();
    });

    it('give concurrent hits distinct counts', async () => {
      const { stores } = make();
      const counts = await Promise.all(Array.from({ length: 15 }, () => stores.counters.increment('ip', 60)));
      expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 15 }, (_, i) => i + 1),
      );
    });
  });

  if (!sharesStorage) return;
  describe(`${name}: two instances on one storage (two processes)`, () => {
    const pair = () => {
      const backend = make();
      if (!backend.twin) throw new TypeError(`${name}: the backend has no twin()`);
      return { a: backend.stores, b: backend.twin() };
    };

    it('let exactly one of two consumers of a code win', async () => {
      const { a, b } = pair();
      for (const id of ['race-1', 'race-2', 'race-3']) {
        await a.codes.put(code(id));
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).codes.consume(id)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        expect((await b.codes.find(id))?.consumed).toBe(true);
        expect((await a.codes.find(id))?.consumed).toBe(true);
      }
    });

    it('see a revocation made by the other and lose no token issued meanwhile', async () => {
      const { a, b } = pair();
      await a.grants.put(grant('shared-grant'));
      const adds = Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? a : b).grants
          .addAccessToken('shared-grant', `j${i}`, START + 3600)
          .then((ok) => (ok ? `j${i}` : undefined)),
      );
      const revoked = b.grants.revoke('shared-grant');
      const issued = (await Promise.all(adds)).filter((j) => j !== undefined);
      expect((await revoked).map((t) => t.jti).sort()).toEqual(issued.sort());
      expect(await a.grants.addAccessToken('shared-grant', 'after', START + 3600)).toBe(false);
      expect((await a.grants.get('shared-grant'))?.revoked).toBe(true);
    });

    it("count hits from both in one window, and read each other's records", async () => {
      const { a, b } = pair();
      const counts = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).counters.increment('shared-ip', 60)),
      );
      expect(counts.map((c) => c.count).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 10 }, (_, i) => i + 1),
      );
      await a.clients.put(client('shared-client'));
      expect(await b.clients.get('shared-client')).toEqual(client('shared-client'));
      await a.denylist.add('shared-jti', START + 60);
      expect(await b.denylist.has('shared-jti')).toBe(true);
      await a.sessions.set('shared-session', { id: 'shared-session', expiresAt: START + 60 }, START + 60);
      expect((await b.sessions.get('shared-session'))?.id).toBe('shared-session');
    });
  });
}

/**
 * Writes a session, an interaction and a consent whose identifiers, CSRF token, OAuth state, user and scope must never
 * be readable in a backend's storage; returns them and the strings to look for.
 */
export async function storeSecretRecords(
  stores: AuthStores,
  now: number,
): Promise<{ sessionId: string; interaction: InteractionRecord; secrets: string[] }> {
  const sessionId = 'SESSIONsecretSESSIONsecret1234';
  const interaction: InteractionRecord = {
    id: 'INTERACTIONsecret1234567',
    sessionId,
    csrf: 'CSRFsecretCSRFsecret1234',
    clientId: 'c1',
    redirectTarget: 'https://a.example/cb',
    redirectUriParam: undefined,
    state: 'STATEvalue',
    codeChallenge: 'x',
    codeChallengeMethod: 'S256',
    scope: ['read:courses-work'],
    resource: 'r',
    expiresAt: now + 600,
  };
  await stores.sessions.set(sessionId, { id: sessionId, sub: 'alice', expiresAt: now + 600 }, now + 600);
  await stores.interactions.set(interaction.id, interaction, interaction.expiresAt);
  await stores.consents.set('alice\nc1', { scope: ['read:courses-work'], resources: ['r'] }, now + 600);
  return {
    sessionId,
    interaction,
    secrets: [sessionId, interaction.id, interaction.csrf, 'STATEvalue', 'alice', 'read:courses-work'],
  };
}
