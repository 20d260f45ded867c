import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratchFolder } from '../../../fixtures/scratch.js';
import {
  answer,
  type BackendCall,
  type ExchangeUnderTest,
  exchangeUnderTest,
  gatewayOf,
  play,
  policy,
} from './harness.js';

const { write } = scratchFolder('exchange-calls');

/** The backend of test/integration/policies/retry.test.ts and forward-request.test.ts, scripted per call. */
function backend(call: BackendCall, hit: number) {
  const url = new URL(call.url);
  // /flaky fails twice, then answers; /broken always fails.
  if ((url.pathname === '/flaky' && hit <= 2) || url.pathname === '/broken')
    return answer(500, `failure ${hit}`);
  if (url.pathname === '/moved') return answer(302, '', { location: '/target?from=moved' });
  if (url.pathname === '/target') return answer(200, `${call.method} ${url.pathname}${url.search}`);
  return answer(200, `ok after ${hit} calls, body "${call.body}"`);
}

/**
 * The engine as the backend's HTTP client, after Envoy delivered the first answer: retry around forward-request
 * calls again while its condition holds (with the same body), follow-redirects="true" follows the backend's
 * redirects. As test/integration/policies/retry.test.ts and forward-request.test.ts through Envoy.
 */
describe("the engine's own backend calls, in-process", () => {
  let exchange: ExchangeUnderTest;

  beforeAll(async () => {
    const retry = `<retry condition="@(context.Response.StatusCode &gt;= 500)" count="3" interval="0" first-fast-retry="true">
      <forward-request buffer-request-body="true" />
    </retry>`;
    const gateway = await gatewayOf(write, {
      'gateway.yaml': `apis:
  - id: rt
    urlSuffix: rt
    serviceUrl: http://backend.test:9000
    operations:
      - { id: flaky, method: POST, urlTemplate: /flaky, policy: retry.xml }
      - { id: broken, method: GET, urlTemplate: /broken, policy: retry.xml }
      - { id: once, method: GET, urlTemplate: /once, policy: retry.xml }
      - { id: moved, method: GET, urlTemplate: /moved, policy: follow.xml }
      - { id: moved-plain, method: GET, urlTemplate: /moved-plain, policy: no-follow.xml }
`,
      'retry.xml': policy(
        {
          backend: retry,
          outbound: '<set-header name="X-Outbound" exists-action="override"><value>ran</value></set-header>',
        },
        ['backend'],
      ),
      'follow.xml': policy({ backend: '<forward-request follow-redirects="true" />' }, ['backend']),
      'no-follow.xml': policy(
        { inbound: '<rewrite-uri template="/moved" />', backend: '<forward-request />' },
        ['backend'],
      ),
    });
    exchange = await exchangeUnderTest(gateway, backend);
  });

  afterAll(async () => {
    await exchange?.close();
  });

  const headerOf = (headers: readonly (readonly [string, string])[], name: string) =>
    headers.find(([key]) => key === name)?.[1];

  it('calls the backend again while the condition holds, with the same body; outbound sees the last answer', async () => {
    const played = await play(exchange, { method: 'POST', path: '/rt/flaky', body: Buffer.from('order-1') });
    expect(played.response.status).toBe(200);
    expect(played.response.body.toString()).toBe('ok after 3 calls, body "order-1"');
    expect(headerOf(played.response.headers, 'x-outbound')).toBe('ran');
    expect(exchange.hits.get('/flaky')).toBe(3);
    expect(played.backend?.body).toBe('order-1');
    expect(exchange.calls.filter((call) => call.by === 'engine').map((call) => call.body)).toEqual([
      'order-1',
      'order-1',
    ]);
  });

  it('stops after count retries and returns the last answer', async () => {
    const played = await play(exchange, { path: '/rt/broken' });
    expect(played.response.status).toBe(500);
    expect(played.response.body.toString()).toBe('failure 4');
    expect(exchange.hits.get('/broken')).toBe(4);
  });

  it('does not retry when the condition is false', async () => {
    const played = await play(exchange, { path: '/rt/once' });
    expect(played.response.body.toString()).toBe('ok after 1 calls, body ""');
    expect(exchange.hits.get('/once')).toBe(1);
  });

  it('follow-redirects="true": the client gets the redirect target', async () => {
    const played = await play(exchange, { path: '/rt/moved' });
    expect(played.response.status).toBe(200);
    expect(played.response.body.toString()).toBe('GET /target?from=moved');
    expect(exchange.hits.get('/target')).toBeGreaterThanOrEqual(1);
  });

  it('by default the redirect is passed to the client', async () => {
    const played = await play(exchange, { path: '/rt/moved-plain' });
    expect(played.response.status).toBe(302);
    expect(headerOf(played.response.headers, 'location')).toBe('/target?from=moved');
  });
});
