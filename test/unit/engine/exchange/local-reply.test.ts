import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratchFolder } from '../../../fixtures/scratch.js';
import { type ExchangeUnderTest, exchangeUnderTest, gatewayOf, play, policy } from './harness.js';

const { write } = scratchFolder('exchange-local-reply');

const lastError = `<return-response>
      <set-status code="599" reason="Handled" />
      <set-header name="Content-Type" exists-action="override"><value>application/json</value></set-header>
      <set-body>@(new JObject(
        new JProperty("source", context.LastError.Source),
        new JProperty("reason", context.LastError.Reason),
        new JProperty("section", context.LastError.Section),
        new JProperty("status", context.Response.StatusCode)
      ).ToString())</set-body>
    </return-response>`;

/**
 * Envoy's own reply for a backend it could not reach (or that did not answer in time) becomes on-error's answer by
 * mutating that reply, LastError naming the failure as API Management does. As
 * test/integration/policies/on-error.test.ts through Envoy.
 */
describe("on-error's answer in place of Envoy's local reply, in-process", () => {
  let exchange: ExchangeUnderTest;

  beforeAll(async () => {
    const gateway = await gatewayOf(write, {
      'gateway.yaml': `apis:
  - id: down
    urlSuffix: down
    serviceUrl: http://down.test:9000
    operations:
      - { id: handled, method: GET, urlTemplate: /handled, policy: handled.xml }
      - { id: slow, method: GET, urlTemplate: /slow, policy: handled.xml }
`,
      'handled.xml': policy({ onError: lastError }),
    });
    exchange = await exchangeUnderTest(gateway, (call) =>
      // No answer: the connection fails (the double's Envoy replies 503, upstream_reset_before_response_started).
      new URL(call.url).pathname === '/slow' ? { status: 200, headers: {}, fail: 'timeout' } : undefined,
    );
  });

  afterAll(async () => {
    await exchange?.close();
  });

  it('a backend that cannot be reached runs on-error with reason BackendConnectionFailure', async () => {
    const played = await play(exchange, { path: '/down/handled' });
    expect(played.response.status).toBe(599);
    const error = JSON.parse(played.response.body.toString()) as Record<string, unknown>;
    expect(error).toMatchObject({
      source: 'forward-request',
      reason: 'BackendConnectionFailure',
      section: 'backend',
    });
    expect(error.status).toBeGreaterThanOrEqual(500);
    // Envoy's reply mutated, not replaced: its text is gone with its content type.
    expect(played.response.body.toString()).not.toMatch(/upstream|reset/);
    expect(played.response.headers).toContainEqual(['content-type', 'application/json']);
    expect(exchange.summaries.at(-1)).toMatchObject({ outcome: 'responded', status: 599 });
  });

  it('a backend that does not answer in time runs on-error with reason Timeout', async () => {
    const played = await play(exchange, { path: '/down/slow' });
    expect(played.response.status).toBe(599);
    expect(JSON.parse(played.response.body.toString())).toMatchObject({ reason: 'Timeout', status: 504 });
  });
});
