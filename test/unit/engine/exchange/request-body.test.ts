import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestAttributes } from '../../../../src/envoy/contract.js';
import type { GatewayUnderTest } from '../../../../src/testing/gateway-under-test.js';
import { scratchFolder } from '../../../fixtures/scratch.js';
import { answer, type ExchangeUnderTest, exchangeUnderTest, gatewayOf, play, policy } from './harness.js';

const limit = 1024;
const { write } = scratchFolder('exchange-body');

/**
 * Request bodies over `maxRequestBodyBytes`, for an operation whose policy reads the body: refused with 413 and API
 * Management's error shape, no policy run and the backend not called — whether the declared length tells (at the
 * request headers) or the body does (Envoy hands over its buffer limit, not end-of-stream). As
 * test/integration/extproc/large-body.test.ts through Envoy.
 */
describe('request bodies over the limit, in-process', () => {
  let gateway: GatewayUnderTest;
  let exchange: ExchangeUnderTest;

  beforeAll(async () => {
    gateway = await gatewayOf(write, {
      'gateway.yaml': `apis:
  - id: body
    urlSuffix: body
    serviceUrl: http://backend.test:9000
    operations:
      - { id: upper, method: POST, urlTemplate: /upper, policy: upper.xml }
      - { id: stream, method: POST, urlTemplate: /stream }
`,
      'upper.xml': policy({ inbound: '<set-body>@(context.Request.Body.As<string>().ToUpper())</set-body>' }),
    });
    exchange = await exchangeUnderTest(gateway, () => answer(200, 'ok'), { maxRequestBodyBytes: limit });
  });

  afterAll(async () => {
    await exchange?.close();
  });

  it('refuses a declared length over the limit with 413 at the request headers', async () => {
    const played = await play(exchange, {
      method: 'POST',
      path: '/body/upper',
      body: Buffer.alloc(3 * limit, 'a'),
    });
    expect(played.response.status).toBe(413);
    expect(JSON.parse(played.response.body.toString())).toEqual({
      statusCode: 413,
      message: `The request body is larger than this operation accepts (${limit} bytes).`,
    });
    expect(played.backend).toBeUndefined();
    expect(exchange.summaries.at(-1)).toMatchObject({ outcome: 'responded', status: 413 });
  });

  it('refuses a body of unknown length once Envoy hands over its buffer limit, not the end of the stream', async () => {
    const engine = exchange.exchanges();
    const headers = new Map([
      [':method', ['POST']],
      [':path', ['/body/upper']],
      [':authority', ['gateway.test']],
      [':scheme', ['https']],
      ['transfer-encoding', ['chunked']],
    ]);
    const attributes = new Map([[requestAttributes.sourceAddress, '10.0.0.1:40000']]);
    const first = await engine.requestHeaders({ headers, endOfStream: false, attributes });
    expect(first).toMatchObject({
      action: 'continue',
      next: { requestBody: true, requestBodyLengthUnknown: true },
    });
    const second = await engine.requestBody!(Buffer.alloc(limit, 'a'), false);
    expect(second).toMatchObject({
      action: 'respond',
      status: 413,
      details: 'portcullis_request_body_too_large',
    });
    engine.end?.();
    expect(exchange.summaries.at(-1)).toMatchObject({ outcome: 'responded', status: 413, api: 'body' });
  });

  it('still gives a policy a body just under the limit, and forwards what the policy made of it', async () => {
    const body = 'b'.repeat(limit - 24);
    const played = await play(exchange, { method: 'POST', path: '/body/upper', body: Buffer.from(body) });
    expect(played.response.status).toBe(200);
    expect(played.backend?.body).toBe(body.toUpperCase());
  });

  it('forwards a body of any size to an operation whose policies do not read it', async () => {
    const played = await play(exchange, {
      method: 'POST',
      path: '/body/stream',
      body: Buffer.alloc(3 * limit, 'c'),
    });
    expect(played.response.status).toBe(200);
    expect(played.backend?.body.length).toBe(3 * limit);
  });
});
