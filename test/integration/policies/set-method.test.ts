import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** set-method: the backend receives the new method; the body goes with it. */
describe('set-method through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('m', backend.url, [
        ['get', 'GET', '/resource', 'to-post.xml'],
        ['post', 'POST', '/resource', 'to-put.xml'],
      ])}\n`,
      {
        'to-post.xml': policy({
          inbound: '<set-method>POST</set-method><set-body>{"created":true}</set-body>',
        }),
        'to-put.xml': policy({
          inbound: '<set-method>@(context.Request.Headers.GetValueOrDefault("X-Method", "PUT"))</set-method>',
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('turns a GET into a POST with a body', async () => {
    const response = await fetch(`${gateway.url}/m/resource`);
    expect(response.status).toBe(200);
    const received = backend.received.at(-1)!;
    expect(received.method).toBe('POST');
    expect(received.url).toBe('/resource');
    expect(received.body).toBe('{"created":true}');
  });

  it('takes the method from an expression and keeps the client body', async () => {
    await fetch(`${gateway.url}/m/resource`, {
      method: 'POST',
      body: 'payload',
      headers: { 'X-Method': 'PATCH' },
    });
    const received = backend.received.at(-1)!;
    expect(received.method).toBe('PATCH');
    expect(received.body).toBe('payload');
  });
});
