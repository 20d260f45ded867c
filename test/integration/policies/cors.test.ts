import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * cors at API scope: a preflight (OPTIONS, for which the API defines no operation) is answered by the gateway
 * without reaching the backend; an actual cross-origin request gets the CORS headers on the backend's response.
 */
describe('cors through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend(() => ({ headers: { 'X-Total': '3' } }));
    gateway = await startGateway(
      `apis:\n${apiYaml(
        'web',
        backend.url,
        [
          ['list', 'GET', '/items'],
          ['put', 'PUT', '/items/{id}'],
        ],
        {
          policy: 'api.xml',
        },
      )}\n`,
      {
        'api.xml': policy({
          inbound: `
    <cors allow-credentials="true">
      <allowed-origins><origin>https://app.example.com</origin></allowed-origins>
      <allowed-methods preflight-result-max-age="300"><method>GET</method><method>PUT</method></allowed-methods>
      <allowed-headers><header>content-type</header><header>authorization</header></allowed-headers>
      <expose-headers><header>x-total</header></expose-headers>
    </cors>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('answers a matching preflight without reaching the backend', async () => {
    const response = await fetch(`${gateway.url}/web/items/4`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example.com',
        'Access-Control-Request-Method': 'PUT',
        'Access-Control-Request-Headers': 'Content-Type',
      },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(response.headers.get('access-control-allow-methods')).toBe('GET,PUT');
    expect(response.headers.get('access-control-allow-headers')).toBe('content-type');
    expect(response.headers.get('access-control-allow-credentials')).toBe('true');
    expect(response.headers.get('access-control-max-age')).toBe('300');
    expect(backend.received).toHaveLength(0);
  });

  it('terminates a preflight from another origin with an empty 200 and no CORS headers', async () => {
    const response = await fetch(`${gateway.url}/web/items`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'GET' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.has('access-control-allow-origin')).toBe(false);
    expect(await response.text()).toBe('');
    expect(backend.received).toHaveLength(0);
  });

  it('an OPTIONS that is no preflight, for a path without such an operation, is OperationNotFound', async () => {
    const response = await fetch(`${gateway.url}/web/items`, { method: 'OPTIONS' });
    expect(response.status).toBe(404);
  });

  it('adds the CORS headers to the response of an actual cross-origin request', async () => {
    const response = await fetch(`${gateway.url}/web/items`, {
      headers: { Origin: 'https://app.example.com' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(response.headers.get('access-control-allow-credentials')).toBe('true');
    expect(response.headers.get('access-control-expose-headers')).toBe('x-total');
    expect(response.headers.get('x-total')).toBe('3');
    expect(backend.received.at(-1)!.url).toBe('/items');
  });

  it('leaves a same-origin request alone', async () => {
    const response = await fetch(`${gateway.url}/web/items`);
    expect(response.headers.has('access-control-allow-origin')).toBe(false);
  });
});
