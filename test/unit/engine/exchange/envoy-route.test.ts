import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendSelectionHeader } from '../../../../src/envoy/contract.js';
import { scratchFolder } from '../../../fixtures/scratch.js';
import { answer, type ExchangeUnderTest, exchangeUnderTest, gatewayOf, play, policy } from './harness.js';

const { write } = scratchFolder('exchange-envoy-route');

/**
 * `--backend-routing envoy-route`: the Envoy in front routes by its own routes, so a backend the policies computed
 * that it would not reach is refused with a 500 (reason BackendNotRoutable) instead of being sent to the API's
 * backend past the policy's choice. As test/integration/envoy/backend-routing.test.ts through Envoy.
 */
describe('the envoy-route refusal, in-process', () => {
  let exchange: ExchangeUnderTest;

  beforeAll(async () => {
    const gateway = await gatewayOf(write, {
      'gateway.yaml': `backends: [{ id: other, url: "http://other.test:8000" }]
apis:
  - id: routed
    urlSuffix: routed
    serviceUrl: http://own.test:9000
    operations:
      - { id: choose, method: GET, urlTemplate: /choose, policy: choose.xml }
`,
      'choose.xml': policy({
        inbound:
          '<set-backend-service base-url="@(context.Request.Headers.GetValueOrDefault(&quot;X-Target&quot;, &quot;&quot;))" />',
      }),
    });
    exchange = await exchangeUnderTest(gateway, () => answer(200, 'ok'), { backendRouting: 'envoy-route' });
  });

  afterAll(async () => {
    await exchange?.close();
  });

  it('refuses with a 500 a request whose policies chose another backend: neither backend is called', async () => {
    const played = await play(exchange, {
      path: '/routed/choose',
      headers: [['X-Target', 'http://other.test:8000/v2']],
    });
    expect(played.response.status).toBe(500);
    expect(JSON.parse(played.response.body.toString())).toEqual({
      statusCode: 500,
      message: 'Internal server error',
    });
    expect(played.backend).toBeUndefined();
    expect(exchange.calls).toHaveLength(0);
    expect(exchange.summaries.at(-1)).toMatchObject({
      outcome: 'responded',
      status: 500,
      lastError: { source: 'set-backend-service', reason: 'BackendNotRoutable' },
    });
  });

  it("forwards a choice of the API's own backend, with the path the choice gives, on Envoy's own route", async () => {
    const played = await play(exchange, {
      path: '/routed/choose?x=1',
      headers: [['X-Target', 'http://own.test:9000/v2']],
    });
    expect(played.response.status).toBe(200);
    // No routing header: the double sends it to the request's authority, where Envoy would take its own route.
    expect(new URL(played.backend?.url ?? 'http://missing/').pathname).toBe('/v2/choose');
    expect(played.backend?.url).toMatch(/\/v2\/choose\?x=1$/);
  });

  it('ignores a routing header the client sent: it does not reach the backend', async () => {
    const played = await play(exchange, {
      path: '/routed/choose',
      headers: [
        ['X-Target', 'http://own.test:9000'],
        [backendSelectionHeader, 'backend_other'],
      ],
    });
    expect(played.response.status).toBe(200);
    expect(played.backend?.headers.find(([name]) => name === backendSelectionHeader)).toBeUndefined();
  });
});
