import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { details, type ManagementHarness, startManagement } from './harness.js';

const keys = ['alice-primary-key-0001', 'alice-secondary-key-0001', 'staff-primary-key-00001'];

describe('/subscriptions', () => {
  let h: ManagementHarness;
  beforeEach(async () => {
    h = await startManagement();
  });
  afterEach(() => h.close());

  it('never shows keys in a read or a list', async () => {
    const list = await h.request('GET', '/subscriptions');
    const one = await h.request('GET', '/subscriptions/alice-starter');
    expect(one.json).toEqual({ id: 'alice-starter', scope: { product: 'starter' }, user: 'alice' });
    for (const key of keys) {
      expect(list.text).not.toContain(key);
      expect(one.text).not.toContain(key);
    }
  });

  it('gives a subscription a new ETag when a key is regenerated, though a read shows the same', async () => {
    const before = await h.request('GET', '/subscriptions/alice-starter');
    expect((await h.request('POST', '/subscriptions/alice-starter/regeneratePrimaryKey')).status).toBe(204);
    const after = await h.request('GET', '/subscriptions/alice-starter');
    expect(after.json).toEqual(before.json);
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    // A write made against the version read before the key changed is refused.
    const stale = await h.request('PATCH', '/subscriptions/alice-starter', {
      body: { name: 'renamed' },
      headers: { 'if-match': before.headers.get('etag')! },
    });
    expect(stale.status).toBe(412);
  });

  it('shows the keys with POST …/listSecrets, never cached', async () => {
    const secrets = await h.request('POST', '/subscriptions/alice-starter/listSecrets');
    expect(secrets.status).toBe(200);
    expect(secrets.json).toEqual({ primaryKey: keys[0], secondaryKey: keys[1] });
    expect(secrets.headers.get('cache-control')).toBe('no-store');
    expect((await h.request('POST', '/subscriptions/nope/listSecrets')).status).toBe(404);
  });

  it('generates both keys for a subscription created without them, and answers without them', async () => {
    const created = await h.request('PUT', '/subscriptions/bob-all', { body: { scope: 'all', name: 'Bob' } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ id: 'bob-all', scope: 'all', name: 'Bob' });
    const { primaryKey, secondaryKey } = (await h.request('POST', '/subscriptions/bob-all/listSecrets')).json;
    expect(primaryKey).toMatch(/^[0-9a-f]{32}$/);
    expect(secondaryKey).toMatch(/^[0-9a-f]{32}$/);
    expect(primaryKey).not.toBe(secondaryKey);
    expect(h.store.running().config.subscriptions.find((s) => s.id === 'bob-all')?.primaryKey).toBe(
      primaryKey,
    );
  });

  it('keeps the keys when a subscription is replaced or patched without them', async () => {
    expect(
      (await h.request('PUT', '/subscriptions/alice-starter', { body: { scope: 'all', user: 'alice' } }))
        .status,
    ).toBe(200);
    expect(
      (await h.request('PATCH', '/subscriptions/alice-starter', { body: { state: 'suspended' } })).json,
    ).toEqual({
      id: 'alice-starter',
      scope: 'all',
      user: 'alice',
      state: 'suspended',
    });
    expect((await h.request('POST', '/subscriptions/alice-starter/listSecrets')).json).toEqual({
      primaryKey: keys[0],
      secondaryKey: keys[1],
    });
  });

  it('takes keys given in the body', async () => {
    const key = 'given-key-0123456789';
    await h.request('PUT', '/subscriptions/given', { body: { scope: { api: 'courses' }, primaryKey: key } });
    expect((await h.request('POST', '/subscriptions/given/listSecrets')).json.primaryKey).toBe(key);
  });

  it('regenerates one key at a time', async () => {
    expect((await h.request('POST', '/subscriptions/alice-starter/regeneratePrimaryKey')).status).toBe(204);
    let secrets = (await h.request('POST', '/subscriptions/alice-starter/listSecrets')).json;
    expect(secrets.primaryKey).toMatch(/^[0-9a-f]{32}$/);
    expect(secrets.secondaryKey).toBe(keys[1]);
    expect((await h.request('POST', '/subscriptions/alice-starter/regenerateSecondaryKey')).status).toBe(204);
    const before = secrets.primaryKey;
    secrets = (await h.request('POST', '/subscriptions/alice-starter/listSecrets')).json;
    expect(secrets.primaryKey).toBe(before);
    expect(secrets.secondaryKey).toMatch(/^[0-9a-f]{32}$/);
    expect(h.store.running().config.subscriptions[0]!.secondaryKey).toBe(secrets.secondaryKey);
    expect((await h.request('POST', '/subscriptions/nope/regeneratePrimaryKey')).status).toBe(404);
  });

  it('refuses a key another subscription has, naming where, without echoing the key', async () => {
    const response = await h.request('PUT', '/subscriptions/dup', {
      body: { scope: 'all', primaryKey: keys[0] },
    });
    expect(response.status).toBe(400);
    expect(details(response)).toEqual([
      expect.stringMatching(
        /gateway\.yaml:\d+:\d+: subscriptions\[2\]\.primaryKey: this key is already used by subscriptions\[0\]\.primaryKey$/,
      ),
    ]);
    expect(response.text).not.toContain(keys[0]);
  });

  it('refuses a subscription for a product or user that does not exist', async () => {
    const response = await h.request('PUT', '/subscriptions/x', {
      body: { scope: { product: 'nope' }, user: 'nobody' },
    });
    expect(response.status).toBe(400);
    expect(details(response)).toHaveLength(2);
  });

  it('blocks deleting a user who owns subscriptions unless they go too', async () => {
    expect((await h.request('DELETE', '/users/alice')).status).toBe(409);
    expect((await h.request('DELETE', '/users/alice?deleteSubscriptions=true')).status).toBe(204);
    expect((await h.request('GET', '/subscriptions')).json.value.map((s: { id: string }) => s.id)).toEqual([
      'staff-direct',
    ]);
  });

  it('deletes a subscription', async () => {
    expect((await h.request('DELETE', '/subscriptions/staff-direct')).status).toBe(204);
    expect(await h.read('gateway.yaml')).not.toContain(keys[2]);
  });
});
