import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratchFolder } from '../../../fixtures/scratch.js';
import { answer, type ExchangeUnderTest, exchangeUnderTest, gatewayOf, play, policy } from './harness.js';

const { write } = scratchFolder('exchange-cors');

/**
 * A CORS preflight is an OPTIONS for which the API defines no operation: the cors policy of the operation the
 * actual request would reach answers it, without the backend; an OPTIONS that is no preflight is
 * OperationNotFound. As test/integration/policies/cors.test.ts through Envoy.
 */
describe('CORS preflight without an operation, in-process', () => {
  let exchange: ExchangeUnderTest;

  beforeAll(async () => {
    const gateway = await gatewayOf(write, {
      'gateway.yaml': `apis:
  - id: web
    urlSuffix: web
    serviceUrl: http://backend.test:9000
    policy: api.xml
    operations:
      - { id: list, method: GET, urlTemplate: /items }
      - { id: put, method: PUT, urlTemplate: "/items/{id}" }
`,
      'api.xml': policy({
        inbound: `<cors allow-credentials="true">
      <allowed-origins><origin>https://app.example.com</origin></allowed-origins>
      <allowed-methods preflight-result-max-age="300"><method>GET</method><method>PUT</method></allowed-methods>
      <allowed-headers><header>content-type</header><header>authorization</header></allowed-headers>
      <expose-headers><header>x-total</header></expose-headers>
    </cors>`,
      }),
    });
    exchange = await exchangeUnderTest(gateway, () => answer(200, '[]', { 'x-total': '3' }));
  });

  afterAll(async () => {
    await exchange?.close();
  });

  const headerOf = (headers: readonly (readonly [string, string])[], name: string) =>
    headers.find(([key]) => key === name)?.[1];

  it('answers a matching preflight without reaching the backend', async () => {
    const played = await play(exchange, {
      method: 'OPTIONS',
      path: '/web/items/4',
      headers: [
        ['Origin', 'https://app.example.com'],
        ['Access-Control-Request-Method', 'PUT'],
        ['Access-Control-Request-Headers', 'Content-Type'],
      ],
    });
    const { status, headers } = played.response;
    expect(status).toBe(200);
    expect(headerOf(headers, 'access-control-allow-origin')).toBe('https://app.example.com');
    expect(headerOf(headers, 'access-control-allow-methods')).toBe('GET,PUT');
    expect(headerOf(headers, 'access-control-allow-headers')).toBe('content-type');
    expect(headerOf(headers, 'access-control-allow-credentials')).toBe('true');
    expect(headerOf(headers, 'access-control-max-age')).toBe('300');
    expect(played.backend).toBeUndefined();
    expect(exchange.calls).toHaveLength(0);
  });

  it('terminates a preflight from another origin with an empty 200 and no CORS headers', async () => {
    const played = await play(exchange, {
      method: 'OPTIONS',
      path: '/web/items',
      headers: [
        ['Origin', 'https://evil.example'],
        ['Access-Control-Request-Method', 'GET'],
      ],
    });
    expect(played.response.status).toBe(200);
    expect(headerOf(played.response.headers, 'access-control-allow-origin')).toBeUndefined();
    expect(played.response.body.toString()).toBe('');
    expect(played.backend).toBeUndefined();
  });

  it('an OPTIONS that is no preflight, for a path without such an operation, is OperationNotFound', async () => {
    const played = await play(exchange, { method: 'OPTIONS', path: '/web/items' });
    expect(played.response.status).toBe(404);
    expect(exchange.summaries.at(-1)).toMatchObject({ outcome: 'responded', status: 404, api: 'web' });
  });
});
