import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchWithTimeout } from '../../../src/engine/http-fetch.js';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type HttpProxyDouble, startHttpProxy } from '../../doubles/http-proxy.js';

// send-request's <proxy>: https://learn.microsoft.com/azure/api-management/proxy-policy
describe('fetchWithTimeout through an HTTP proxy', () => {
  let backend: EchoBackend;
  let open: HttpProxyDouble;
  let guarded: HttpProxyDouble;

  beforeAll(async () => {
    backend = await startEchoBackend(() => ({ body: 'from the backend' }));
    open = await startHttpProxy();
    guarded = await startHttpProxy('svc:s3cret');
  });
  afterAll(async () => {
    await Promise.all([backend?.close(), open?.close(), guarded?.close()]);
  });

  const get = (proxy: { url: string; username?: string; password?: string } | undefined) =>
    fetchWithTimeout({
      method: 'GET',
      url: `${backend.url}/orders?id=7`,
      headers: [['X-Trace', 'abc']],
      timeoutMs: 5000,
      ...(proxy ? { proxy } : {}),
    });

  it('sends the request to the proxy in absolute form, and the answer comes back', async () => {
    const response = await get({ url: open.url });
    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe('from the backend');
    const seen = open.received.at(-1)!;
    expect(seen.target).toBe(`${backend.url}/orders?id=7`);
    expect(seen.headers['x-trace']).toBe('abc');
    expect(backend.received.at(-1)!.url).toBe('/orders?id=7');
  });

  it('sends the credentials as Proxy-Authorization (Basic), never to the backend', async () => {
    const response = await get({ url: guarded.url, username: 'svc', password: 's3cret' });
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.headers['proxy-authorization']).toBeUndefined();
    expect(backend.received.at(-1)!.headers.authorization).toBeUndefined();
  });

  it('fails (as a connection failure) when the proxy refuses the credentials with 407', async () => {
    const before = backend.received.length;
    await expect(get({ url: guarded.url })).rejects.toThrow();
    await expect(get({ url: guarded.url, username: 'svc', password: 'nope' })).rejects.toThrow();
    expect(backend.received.length).toBe(before);
  });

  it('goes straight to the backend without a proxy', async () => {
    const before = open.received.length;
    expect((await get(undefined)).status).toBe(200);
    expect(open.received.length).toBe(before);
  });
});
