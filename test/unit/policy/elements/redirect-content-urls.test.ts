import { describe, expect, it } from 'vitest';
import { UrlModel } from '../../../../src/expr/index.js';
import {
  fakeServices,
  inbound,
  outbound,
  pipelineOf,
  policies,
  request,
  runAll,
} from '../../../doubles/policy-services.js';

const api = { path: 'shop', serviceUrl: UrlModel.parse('http://backend.internal:8080/v1') };

describe('redirect-content-urls', () => {
  it('rewrites backend links in the response body to gateway links', async () => {
    const { response } = await outbound(
      '<redirect-content-urls />',
      { body: '{"next":"http://backend.internal:8080/v1/orders?page=2"}' },
      { url: 'https://gw.example.com/orders', api },
    );
    expect(response.body.toString()).toBe('{"next":"https://gw.example.com/shop/orders?page=2"}');
  });

  it('rewrites gateway links in the request body to backend links', async () => {
    const { outcome } = await inbound('<redirect-content-urls />', {
      method: 'POST',
      url: 'https://gw.example.com/orders',
      api,
      body: Buffer.from('see https://gw.example.com/shop/items/1'),
    });
    expect(outcome.kind === 'forward' && outcome.request.body?.toString()).toBe(
      'see http://backend.internal:8080/v1/items/1',
    );
  });

  it('leaves unrelated links alone', async () => {
    const { response } = await outbound(
      '<redirect-content-urls />',
      { body: 'https://other.example.com/x' },
      { url: 'https://gw.example.com/x', api },
    );
    expect(response.body.toString()).toBe('https://other.example.com/x');
    expect(response.bodyChanged).toBe(false);
  });

  it('uses the backend chosen by set-backend-service', async () => {
    const pipeline = pipelineOf(
      policies({
        inbound: '<set-backend-service base-url="https://blue.internal/api" />',
        outbound: '<redirect-content-urls />',
      }),
    );
    const { response } = await runAll(
      pipeline,
      request({ url: 'https://gw.example.com/x', api }),
      fakeServices(),
      {
        body: 'https://blue.internal/api/x/1',
      },
    );
    expect(response.body.toString()).toBe('https://gw.example.com/shop/x/1');
  });
});
