import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';

/**
 * Issue 16: an API with no policy at any scope and no subscription needed skips the engine on Envoy's own routes
 * (envoy/bootstrap/engine-bypass.ts) — what the engine would have done (request id, internal headers stripped)
 * Envoy does — while every request the engine would answer or change still reaches it.
 */
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const streamsStarted = 'http.ingress_http.ext_proc.streams_started';

describe('an API without policies skips the engine', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `
apis:
  - id: plain
    urlSuffix: plain
    serviceUrl: ${backend.url}/base
    operations:
      - { method: GET, urlTemplate: /items }
      - { method: GET, urlTemplate: "/items/{id}" }
  - id: guarded
    urlSuffix: guarded
    serviceUrl: ${backend.url}/guarded
    policy: guarded.xml
    operations:
      - { method: GET, urlTemplate: /items }
`,
      {
        'guarded.xml':
          '<policies><inbound><base /><set-header name="x-policy" exists-action="override"><value>ran</value></set-header></inbound><backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error></policies>',
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  const streams = async () => (await gateway.envoy.stats('ext_proc')).get(streamsStarted) ?? 0;

  it('answers an operation of the policy-less API without an ext_proc stream, as the engine would have', async () => {
    const before = await streams();
    const response = await fetch(`${gateway.url}/plain/items/7?page=2`, {
      headers: {
        'x-portcullis-client-address': '203.0.113.9',
        'x-portcullis-anything': 'forged',
        'x-other': 'kept',
      },
    });
    expect(response.status).toBe(200);
    const seen = backend.received.at(-1)!;
    expect(seen.url).toBe('/base/items/7?page=2');
    expect(seen.headers['x-request-id']).toMatch(uuid);
    expect(seen.headers['x-other']).toBe('kept');
    expect(Object.keys(seen.headers).filter((name) => name.startsWith('x-portcullis-'))).toEqual([]);
    expect(await streams()).toBe(before);
  });

  it('keeps the request id a client sent', async () => {
    await (
      await fetch(`${gateway.url}/plain/items`, { headers: { 'x-request-id': 'client-chosen-id' } })
    ).arrayBuffer();
    expect(backend.received.at(-1)!.headers['x-request-id']).toBe('client-chosen-id');
  });

  it('still lets the engine answer what it would answer or change: an unknown operation, a key, a trace', async () => {
    const before = await streams();
    const unknown = await fetch(`${gateway.url}/plain/nothing`);
    expect(unknown.status).toBe(404);
    // The engine checks a key even where none is needed (none is configured: it is refused).
    const keyed = await fetch(`${gateway.url}/plain/items`, {
      headers: { 'ocp-apim-subscription-key': 'not-a-key-anyone-has' },
    });
    expect(keyed.status).toBe(401);
    const queryKey = await fetch(`${gateway.url}/plain/items?subscription-key=not-a-key-anyone-has`);
    expect(queryKey.status).toBe(401);
    await (
      await fetch(`${gateway.url}/plain/items`, { headers: { 'x-portcullis-trace': 'x' } })
    ).arrayBuffer();
    expect(await streams()).toBe(before + 4);
    // A path with an escape goes through it too (it decodes and re-encodes; Envoy already decoded `%41`).
    await (await fetch(`${gateway.url}/plain/items/a%2C%41`)).arrayBuffer();
    expect(backend.received.at(-1)!.url).toBe('/base/items/a%2CA');
    expect(await streams()).toBe(before + 5);
  });

  it('runs the policy of an API that has one', async () => {
    const before = await streams();
    const response = await fetch(`${gateway.url}/guarded/items`, {
      headers: { 'x-portcullis-client-address': '203.0.113.9' },
    });
    expect(response.status).toBe(200);
    const seen = backend.received.at(-1)!;
    expect(seen.url).toBe('/guarded/items');
    expect(seen.headers['x-policy']).toBe('ran');
    expect(seen.headers['x-portcullis-client-address']).toBeUndefined();
    expect(await streams()).toBe(before + 1);
  });

  it('answers with no engine at all once it is gone, where it is not needed', async () => {
    await gateway.engine.shutdown(100);
    const response = await fetch(`${gateway.url}/plain/items/8`);
    expect(response.status).toBe(200);
    expect(backend.received.at(-1)!.url).toBe('/base/items/8');
    expect((await fetch(`${gateway.url}/guarded/items`)).status).toBeGreaterThanOrEqual(500);
  });
});
