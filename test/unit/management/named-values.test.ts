import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { details, type ManagementHarness, startManagement } from './harness.js';

const secret = 'very-secret-customer-key';

describe('/namedValues', () => {
  let h: ManagementHarness;
  beforeEach(async () => {
    h = await startManagement();
  });
  afterEach(() => h.close());

  it('never shows a secret value in a read or a list', async () => {
    const list = await h.request('GET', '/namedValues');
    expect(list.json.value).toEqual([
      { id: 'greeting', value: 'hello', secret: false },
      { id: 'customer-key', secret: true },
    ]);
    const one = await h.request('GET', '/namedValues/customer-key');
    expect(one.json).toEqual({ id: 'customer-key', secret: true });
    expect(list.text + one.text).not.toContain(secret);
  });

  it('shows a value with POST …/listValue, never cached', async () => {
    const value = await h.request('POST', '/namedValues/customer-key/listValue');
    expect(value.json).toEqual({ value: secret });
    expect(value.headers.get('cache-control')).toBe('no-store');
    expect((await h.request('POST', '/namedValues/greeting/listValue')).json).toEqual({ value: 'hello' });
    expect((await h.request('POST', '/namedValues/nope/listValue')).status).toBe(404);
  });

  it('writes a plain value in the short form and a secret one as { value, secret }', async () => {
    expect((await h.request('PUT', '/namedValues/plain', { body: { value: 'v1' } })).status).toBe(201);
    const created = await h.request('PUT', '/namedValues/token', {
      body: { value: 'hidden-token', secret: true },
    });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ id: 'token', secret: true });
    expect(created.text).not.toContain('hidden-token');
    const file = await h.read('gateway.yaml');
    expect(file).toContain('  plain: v1\n');
    expect(file).toContain('  token:\n    value: hidden-token\n    secret: true\n');
    expect(h.store.running().config.namedValues.token).toEqual({ value: 'hidden-token', secret: true });
  });

  it('keeps the value when a replacement or a patch only changes whether it is secret', async () => {
    const patched = await h.request('PATCH', '/namedValues/greeting', { body: { secret: true } });
    expect(patched.json).toEqual({ id: 'greeting', secret: true });
    expect((await h.request('GET', '/namedValues/greeting')).text).not.toContain('hello');
    expect((await h.request('PUT', '/namedValues/greeting', { body: { secret: false } })).json).toEqual({
      id: 'greeting',
      value: 'hello',
      secret: false,
    });
    expect(await h.read('gateway.yaml')).toContain('  greeting: hello\n');
  });

  it('changes a secret value without showing it', async () => {
    const response = await h.request('PATCH', '/namedValues/customer-key', {
      body: { value: 'rotated-secret' },
    });
    expect(response.json).toEqual({ id: 'customer-key', secret: true });
    expect((await h.request('POST', '/namedValues/customer-key/listValue')).json.value).toBe(
      'rotated-secret',
    );
    // The flow style the operator chose stays.
    expect(await h.read('gateway.yaml')).toContain(
      '  customer-key: { value: rotated-secret, secret: true }\n',
    );
  });

  it('requires a value when creating', async () => {
    const response = await h.request('PUT', '/namedValues/empty', { body: { secret: true } });
    expect(response.status).toBe(400);
    expect(details(response)).toEqual(['value: is required']);
  });

  it('refuses unknown keys and a name the configuration does not allow', async () => {
    expect(details(await h.request('PUT', '/namedValues/x', { body: { value: 'a', tags: [] } }))).toEqual([
      'request body:1:14: tags: unknown key "tags"',
    ]);
    const badName = await h.request('PUT', `/namedValues/${encodeURIComponent('a b')}`, {
      body: { value: 'a' },
    });
    expect(badName.status).toBe(400);
  });

  it('refuses to delete a value a policy uses, naming the policy line', async () => {
    const policy =
      '<policies>\n  <inbound>\n    <set-header name="x-greeting" exists-action="override"><value>{{greeting}}</value></set-header>\n  </inbound>\n</policies>';
    expect(
      (await h.request('PUT', '/policies/policy', { type: 'application/xml', body: policy })).status,
    ).toBe(201);
    const response = await h.request('DELETE', '/namedValues/greeting');
    expect(response.status).toBe(400);
    expect(details(response)).toEqual([
      expect.stringMatching(/gateway\.yaml \(policy\):3:\d+: named value "greeting" is not defined$/),
    ]);
    expect((await h.request('GET', '/namedValues/greeting')).status).toBe(200);
  });

  it('deletes a value nothing uses', async () => {
    expect((await h.request('DELETE', '/namedValues/customer-key')).status).toBe(204);
    expect(await h.read('gateway.yaml')).not.toContain(secret);
  });
});
