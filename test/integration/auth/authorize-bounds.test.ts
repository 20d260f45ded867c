import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStores } from '../../../src/auth/index.js';
import type { AuthStores, ExpiringStore } from '../../../src/auth/stores/types.js';
import {
  discover,
  type RegisteredClient,
  register,
  startServer,
  type TestServer,
} from '../../processes/auth-server.js';

/** Wraps an expiring store and keeps the set of keys it holds, as seen through its own operations. */
function counted<T>(store: ExpiringStore<T>, live: Set<string>): ExpiringStore<T> {
  return {
    get: async (key) => {
      const value = await store.get(key);
      if (value === undefined) live.delete(key);
      return value;
    },
    set: async (key, value, expiresAt) => {
      live.add(key);
      await store.set(key, value, expiresAt);
    },
    delete: async (key) => {
      live.delete(key);
      return store.delete(key);
    },
  };
}

/**
 * What anonymous GET /v1/authorize costs the server: no session record (a browser that has not signed in is only its
 * cookie), one pending request of capped size, and never more pending requests than the cap.
 */
describe('anonymous authorization requests', () => {
  const CAP = 50;
  let server: TestServer;
  let client: RegisteredClient;
  let stores: AuthStores;
  const sessions = new Set<string>();
  const interactions = new Set<string>();

  beforeAll(async () => {
    stores = createMemoryStores(() => Math.floor(Date.now() / 1000), { maxInteractions: CAP });
    stores.sessions = counted(stores.sessions, sessions);
    stores.interactions = counted(stores.interactions, interactions);
    server = await startServer({ stores, limits: { authorizationsPerAddress: 2000 } });
    client = await register(await discover(server), 'none');
  });
  afterAll(() => server.close());

  it('1,000 requests with a 1 KB state store no session, and keep at most the cap of pending requests', async () => {
    const url = new URL(`${server.url}/v1/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client.client_id,
      redirect_uri: client.redirectUri,
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
      state: 's'.repeat(1024),
    }).toString();
    for (let i = 0; i < 1000; i++) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    expect(sessions.size).toBe(0);
    // Every key ever written is looked up again: the ones the store dropped are forgotten by the wrapper.
    for (const key of [...interactions]) await stores.interactions.get(key);
    expect(interactions.size).toBe(CAP);
  });
});
