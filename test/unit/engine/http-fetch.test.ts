import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchWithTimeout } from '../../../src/engine/http-fetch.js';
import type { ClientCertificate } from '../../../src/policy/index.js';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type HttpProxyDouble, startHttpProxy } from '../../doubles/http-proxy.js';
import { type MutualTlsPartner, startMutualTlsPartner } from '../../doubles/mutual-tls-partner.js';
import { type CertificateWorkshop, certificateWorkshop } from '../../processes/certificates.js';

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

// send-request's <authentication-certificate>: https://learn.microsoft.com/azure/api-management/authentication-certificate-policy
describe('fetchWithTimeout with a client certificate', () => {
  let workshop: CertificateWorkshop;
  let partner: MutualTlsPartner;
  let proxy: HttpProxyDouble;
  let presented: ClientCertificate;

  beforeAll(async () => {
    workshop = await certificateWorkshop();
    partner = await startMutualTlsPartner(workshop);
    const client = await partner.clientCa.issue({ name: 'gateway', subject: '/CN=gateway', usage: 'client' });
    presented = {
      kind: 'pem',
      certificate: client.pem,
      key: client.key,
      poolKey: 'store:gateway',
      label: 'certificate "gateway"',
    };
    proxy = await startHttpProxy();
  });
  afterAll(async () => {
    await partner?.close();
    await proxy?.close();
    await workshop?.remove();
  });

  const get = (certificate: ClientCertificate | undefined, via?: HttpProxyDouble) =>
    fetchWithTimeout({
      method: 'GET',
      url: partner.url,
      headers: [],
      timeoutMs: 5000,
      ...(certificate ? { clientCertificate: certificate } : {}),
      ...(via ? { proxy: { url: via.url } } : {}),
    });

  it('presents it, over the connections kept for it', async () => {
    const before = partner.handshakes;
    for (let i = 0; i < 10; i++) expect((await get(presented)).body.toString()).toBe('gateway');
    // Sequential requests: the pool's connection is reused once undici has taken it back after an answer.
    expect(partner.handshakes - before).toBeGreaterThanOrEqual(1);
    expect(partner.handshakes - before).toBeLessThan(10);
    // A request without a certificate never gets one of those connections: the server refuses its handshake.
    await expect(get(undefined)).rejects.toThrow();
  });

  it('presents it to the target through a proxy’s CONNECT tunnel', async () => {
    expect((await get(presented, proxy)).body.toString()).toBe('gateway');
    expect(proxy.received.at(-1)).toMatchObject({ method: 'CONNECT', target: partner.url.split('/')[2] });
  });

  it('keeps a bounded number of connection pools: the least recently used is closed, and connects anew', async () => {
    const named = (i: number): ClientCertificate => ({ ...presented, poolKey: `store:gateway-${i}` });
    expect((await get(named(0))).status).toBe(200);
    const before = partner.handshakes;
    for (let i = 1; i <= 32; i++) expect((await get(named(i))).status).toBe(200);
    expect(partner.handshakes - before).toBe(32);
    // Pool 0 was the least recently used of 33: closed, so its next request makes a new handshake.
    expect((await get(named(0))).status).toBe(200);
    expect(partner.handshakes - before).toBe(33);
  });
});
