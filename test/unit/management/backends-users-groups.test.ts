import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { details, type ManagementHarness, startManagement } from './harness.js';

describe('/backends, /users, /groups', () => {
  let h: ManagementHarness;
  beforeEach(async () => {
    h = await startManagement();
  });
  afterEach(() => h.close());

  it('manages backends', async () => {
    expect(
      (await h.request('PUT', '/backends/search', { body: { url: 'https://search.example' } })).status,
    ).toBe(201);
    expect(h.store.running().config.backends).toEqual([
      { id: 'bulk', url: 'http://127.0.0.1:8082' },
      { id: 'search', url: 'https://search.example' },
    ]);
    expect(details(await h.request('PUT', '/backends/x', { body: { url: 'not a url' } }))[0]).toMatch(
      /^request body:1:2: url: must be a URL, got "not a url"/,
    );
    const badId = await h.request('PUT', '/backends/bad.id', { body: { url: 'https://b.example' } });
    expect(badId.status).toBe(400);
    expect(details(badId)[0]).toMatch(/backends\[2\]\.id: must be letters, digits, "-" or "_"/);
  });

  it('takes a pool and a circuit breaker, refusing a pool that names an unknown backend', async () => {
    const breaker = {
      rules: [
        {
          failureCondition: { count: 1, interval: 'PT1M', statusCodeRanges: [{ min: 429, max: 429 }] },
          tripDuration: 'PT1M',
          acceptRetryAfter: true,
        },
      ],
    };
    expect((await h.request('PATCH', '/backends/bulk', { body: { circuitBreaker: breaker } })).status).toBe(
      200,
    );
    const pool = { type: 'pool', pool: { services: [{ id: 'bulk', priority: 1 }] } };
    expect((await h.request('PUT', '/backends/pool', { body: pool })).status).toBe(201);
    expect(
      h.store.running().config.backends.find((backend) => backend.id === 'pool')?.pool?.services,
    ).toEqual([{ id: 'bulk', priority: 1, weight: 1 }]);
    const unknown = await h.request('PUT', '/backends/other', {
      body: { type: 'pool', pool: { services: [{ id: 'nowhere' }] } },
    });
    expect(unknown.status).toBe(400);
    expect(details(unknown)[0]).toMatch(/pool\.services\[0\]\.id: no backend "nowhere"/);
  });

  it('manages users, refusing a group that does not exist', async () => {
    const created = await h.request('PUT', '/users/bob', {
      body: { email: 'bob@example.com', groups: ['teachers'] },
    });
    expect(created.status).toBe(201);
    expect(h.store.running().config.users.find((user) => user.id === 'bob')?.groups).toEqual(['teachers']);
    expect((await h.request('PATCH', '/users/bob', { body: { groups: ['nope'] } })).status).toBe(400);
    expect((await h.request('DELETE', '/users/bob')).status).toBe(204);
  });

  it('takes a deleted group out of its members', async () => {
    expect((await h.request('PUT', '/groups/admins', { body: { name: 'Admins' } })).status).toBe(201);
    await h.request('PATCH', '/users/alice', { body: { groups: ['teachers', 'admins'] } });
    expect((await h.request('DELETE', '/groups/teachers')).status).toBe(204);
    expect((await h.request('GET', '/users/alice')).json.groups).toEqual(['admins']);
    expect((await h.request('GET', '/groups')).json.value).toEqual([{ id: 'admins', name: 'Admins' }]);
  });
});
