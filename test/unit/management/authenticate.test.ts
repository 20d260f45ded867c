import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { hashPassword } from '../../../src/auth/index.js';
import { administrator, basic, type ManagementHarness, startManagement } from './harness.js';

describe('administrator authentication (HTTP Basic against scrypt hashes)', () => {
  let h: ManagementHarness;
  beforeEach(async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    h = await startManagement();
  });
  afterEach(async () => {
    await h.close();
    vi.restoreAllMocks();
  });

  const refused = (response: { status: number; headers: Headers; json: any }) => {
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      'Basic realm="Portcullis management", charset="UTF-8"',
    );
    expect(response.json.error.code).toBe('Unauthorized');
  };

  it('answers 401 with a Basic challenge without credentials, on any path', async () => {
    refused(await h.request('GET', '/apis', { auth: null }));
    refused(await h.request('GET', '/no/such/path', { auth: null }));
    refused(await h.request('PUT', '/backends/x', { auth: null, body: { url: 'http://b' } }));
    expect((await h.request('GET', '/backends/x')).status).toBe(404);
  });

  it('answers 401 to a wrong password, an unknown name and a malformed header', async () => {
    refused(await h.request('GET', '/apis', { auth: { name: 'admin', password: 'wrong' } }));
    refused(await h.request('GET', '/apis', { auth: { name: 'mallory', password: administrator.password } }));
    refused(await h.request('GET', '/apis', { auth: null, headers: { authorization: 'Bearer abc' } }));
    refused(
      await h.request('GET', '/apis', { auth: null, headers: { authorization: 'Basic bm9jb2xvbg==' } }),
    );
  });

  it('lets the administrator in, and names them in the audit line of each change', async () => {
    expect((await h.request('GET', '/apis')).status).toBe(200);
    expect((await h.request('PUT', '/backends/b', { body: { url: 'http://127.0.0.1:9' } })).status).toBe(201);
    expect(h.audit).toEqual(['management: admin PUT /backends/b → 201 (generation 2)']);
  });

  it('answers 429 with Retry-After after 10 failures from one address, even to the right password', async () => {
    for (let attempt = 0; attempt < 10; attempt++) {
      refused(await h.request('GET', '/apis', { auth: { name: 'admin', password: `guess-${attempt}` } }));
    }
    const blocked = await h.request('GET', '/apis');
    expect(blocked.status).toBe(429);
    expect(blocked.json.error.code).toBe('TooManyRequests');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // Envoy's management listener names the client in its own header: another client is not blocked.
    expect(
      (await h.request('GET', '/apis', { headers: { 'x-portcullis-client-address': '192.0.2.7' } })).status,
    ).toBe(200);
    // X-Forwarded-For is whatever the client wrote: rotating it escapes nothing.
    expect((await h.request('GET', '/apis', { headers: { 'x-forwarded-for': '192.0.2.8' } })).status).toBe(
      429,
    );
  });

  it('does not count requests without credentials as failures', async () => {
    for (let attempt = 0; attempt < 12; attempt++) refused(await h.request('GET', '/apis', { auth: null }));
    expect((await h.request('GET', '/apis')).status).toBe(200);
  });

  it('stops accepting a password at once when the administrator’s hash changes', async () => {
    expect((await h.request('GET', '/apis')).status).toBe(200);
    const exported = await h.request('GET', '/configuration');
    const hash = await hashPassword('a new password');
    const changed = exported.text.replace(/passwordHash: .*/, `passwordHash: "${hash}"`);
    const imported = await h.request('PUT', '/configuration', { type: 'application/yaml', body: changed });
    expect(imported.status).toBe(204);
    // The old password was verified a moment ago (and cached): the cache is keyed on the hash too.
    refused(await h.request('GET', '/apis'));
    expect(
      (
        await h.request('GET', '/apis', {
          headers: { authorization: basic('admin', 'a new password') },
          auth: null,
        })
      ).status,
    ).toBe(200);
  });
});
