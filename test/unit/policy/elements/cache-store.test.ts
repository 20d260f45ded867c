import { describe, expect, it } from 'vitest';
import { fakeServices, pipelineOf, policies, request, runAll } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

const pipeline = (store: string) =>
  pipelineOf(
    policies({
      inbound: '<cache-lookup vary-by-developer="false" vary-by-developer-groups="false" />',
      outbound: store,
    }),
  );

describe('cache-store', () => {
  it('stores a 200 for the given duration, without per-connection headers', async () => {
    const services = fakeServices();
    await runAll(pipeline('<cache-store duration="120" />'), request(), services, {
      body: 'b',
      headers: [
        ['Content-Type', 'text/plain'],
        ['Set-Cookie', 's=1'],
      ],
    });
    const [entry] = [...services.responses.values()];
    expect(entry?.ttl).toBe(120);
    expect(entry?.value.status).toBe(200);
    expect(entry?.value.body.toString()).toBe('b');
    expect(entry?.value.headers).toEqual([['Content-Type', 'text/plain']]);
  });

  it('stores only 200 unless cache-response is true', async () => {
    const services = fakeServices();
    await runAll(pipeline('<cache-store duration="60" />'), request(), services, { status: 404 });
    expect(services.responses.size).toBe(0);
    await runAll(pipeline('<cache-store duration="60" cache-response="true" />'), request(), services, {
      status: 404,
    });
    expect(services.responses.size).toBe(1);
  });

  it('does not store what the backend marks no-store or private', async () => {
    const services = fakeServices();
    await runAll(pipeline('<cache-store duration="60" />'), request(), services, {
      headers: [['Cache-Control', 'no-store']],
    });
    await runAll(pipeline('<cache-store duration="60" />'), request(), services, {
      headers: [['Cache-Control', 'private']],
    });
    expect(services.responses.size).toBe(0);
  });

  it('takes the duration from an expression and needs the response body', async () => {
    const services = fakeServices();
    const p = pipeline('<cache-store duration="@(30 * 2)" />');
    expect(p.needs.responseBody).toBe(true);
    await runAll(p, request(), services);
    expect([...services.responses.values()][0]?.ttl).toBe(60);
  });

  it('does nothing without a cache-lookup before it', async () => {
    const services = fakeServices();
    await runAll(pipelineOf(policies({ outbound: '<cache-store duration="60" />' })), request(), services);
    expect(services.responses.size).toBe(0);
  });

  it('requires duration and is outbound only', () => {
    expect(diagnosticsOf('<cache-store />', 'outbound')).toEqual([
      'policies/outbound/cache-store[1]: cache-store/@duration is required, got no "duration" attribute',
    ]);
    expect(diagnosticsOf('<cache-store duration="1" />')[0]).toContain(
      'is not allowed in the inbound section',
    );
  });
});
