import { describe, expect, it } from 'vitest';
import {
  fakeServices,
  header,
  pipelineOf,
  policies,
  request,
  runAll,
} from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

const pipeline = (lookup = '', children = '<vary-by-header>Authorization</vary-by-header>') =>
  pipelineOf(
    policies({
      inbound: `<cache-lookup vary-by-developer="false" vary-by-developer-groups="false" allow-private-response-caching="true" ${lookup}>${children}</cache-lookup>`,
      outbound: '<cache-store duration="120" />',
    }),
  );

describe('cache-lookup', () => {
  it('serves a stored response without calling the backend', async () => {
    const services = fakeServices();
    const p = pipeline();
    const first = await runAll(p, request({ headers: [['Authorization', 'a']] }), services, {
      body: 'fresh',
    });
    expect(first.forwarded).toBe(true);
    const second = await runAll(p, request({ headers: [['Authorization', 'a']] }), services, {
      body: 'other',
    });
    expect(second.forwarded).toBe(false);
    expect(second.response.body.toString()).toBe('fresh');
  });

  it('misses for another value of a vary-by-header', async () => {
    const services = fakeServices();
    const p = pipeline();
    await runAll(p, request({ headers: [['Authorization', 'a']] }), services, { body: 'for a' });
    const other = await runAll(p, request({ headers: [['Authorization', 'b']] }), services, {
      body: 'for b',
    });
    expect(other.forwarded).toBe(true);
    expect(other.response.body.toString()).toBe('for b');
  });

  it('varies by the listed query parameters only', async () => {
    const services = fakeServices();
    const p = pipeline('', '<vary-by-query-parameter>a;b</vary-by-query-parameter>');
    await runAll(p, request({ url: 'https://gw/x?a=1&c=1' }), services, { body: '1' });
    expect((await runAll(p, request({ url: 'https://gw/x?c=2&a=1' }), services)).forwarded).toBe(false);
    expect((await runAll(p, request({ url: 'https://gw/x?a=2' }), services)).forwarded).toBe(true);
  });

  it('varies by developer and developer groups', async () => {
    const services = fakeServices();
    const p = pipelineOf(
      policies({
        inbound: '<cache-lookup vary-by-developer="true" vary-by-developer-groups="true" />',
        outbound: '<cache-store duration="60" />',
      }),
    );
    await runAll(p, request({ user: { id: 'u1', groups: [] } }), services, { body: 'u1' });
    expect((await runAll(p, request({ user: { id: 'u2', groups: [] } }), services)).forwarded).toBe(true);
    expect((await runAll(p, request({ user: { id: 'u1', groups: [] } }), services)).forwarded).toBe(false);
  });

  it('never caches a request with Authorization unless private caching is allowed, nor a non-GET', async () => {
    const services = fakeServices();
    const p = pipelineOf(
      policies({
        inbound: '<cache-lookup vary-by-developer="false" vary-by-developer-groups="false" />',
        outbound: '<cache-store duration="60" />',
      }),
    );
    await runAll(p, request({ headers: [['Authorization', 'a']] }), services);
    await runAll(p, request({ method: 'POST' }), services);
    expect(services.responses.size).toBe(0);
  });

  it('emits downstream Cache-Control when asked', async () => {
    const services = fakeServices();
    const p = pipeline('downstream-caching-type="public" must-revalidate="false"', '');
    const { response } = await runAll(p, request(), services, { body: 'x' });
    expect(header(response, 'Cache-Control')).toEqual(['public, max-age=120']);
  });

  it('requires vary-by-developer and vary-by-developer-groups', () => {
    expect(diagnosticsOf('<cache-lookup />')).toEqual([
      'policies/inbound/cache-lookup[1]: cache-lookup/@vary-by-developer is required, got no "vary-by-developer" attribute',
      'policies/inbound/cache-lookup[1]: cache-lookup/@vary-by-developer-groups is required, got no "vary-by-developer-groups" attribute',
    ]);
  });
});
