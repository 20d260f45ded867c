import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/config/plan.js';
import type { BootstrapPlan } from '../../../src/envoy/bootstrap/plan.js';
import { passThroughExchanges } from '../../../src/extproc/passthrough.js';
import { type ListeningExtProcServer, startExtProcServer } from '../../../src/extproc/server.js';
import { createServiceApp } from '../../../src/service/app.js';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type RunningEnvoy, startEnvoy } from '../../processes/envoy.js';
import { until } from '../../processes/wait.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('a request through a real Envoy and the engine (pass-through)', () => {
  let backend: EchoBackend;
  let engine: ListeningExtProcServer;
  let enginePort: number;
  let service: Server;
  let envoy: RunningEnvoy;

  beforeAll(async () => {
    backend = await startEchoBackend();
    enginePort = await freePort();
    engine = await startExtProcServer(
      { exchanges: passThroughExchanges },
      { host: '127.0.0.1', port: enginePort },
    );
    service = createServiceApp({
      middleware: [
        async (ctx, next) => {
          if (ctx.path.startsWith('/v1/mcp')) ctx.body = { reachedService: ctx.path };
          else await next();
        },
      ],
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => service.once('listening', resolve));
    const plan: BootstrapPlan = {
      gateway: { host: '127.0.0.1', port: await freePort() },
      admin: { host: '127.0.0.1', port: await freePort() },
      engine: { endpoints: [{ host: '127.0.0.1', port: enginePort }], messageTimeoutMs: 500 },
      service: { host: '127.0.0.1', port: (service.address() as AddressInfo).port },
      apis: [{ id: 'echo', urlSuffix: 'echo', serviceUrl: `${backend.url}/base` }],
    };
    envoy = await startEnvoy(plan);
  });

  afterAll(async () => {
    await envoy?.stop();
    await engine?.shutdown(100);
    service?.close();
    await backend?.close();
  });

  it('reaches the backend under the service URL path, with a request id the engine assigned', async () => {
    const response = await fetch(`${envoy.gatewayUrl}/echo/api/Course?x=1`);
    expect(response.status).toBe(200);
    const seen = backend.received.at(-1)!;
    expect(seen.url).toBe('/base/api/Course?x=1');
    expect(seen.headers['x-request-id']).toMatch(uuid);
  });

  it('keeps a request id the client sent', async () => {
    await fetch(`${envoy.gatewayUrl}/echo/api/Course`, { headers: { 'x-request-id': 'client-chosen-id' } });
    expect(backend.received.at(-1)!.headers['x-request-id']).toBe('client-chosen-id');
  });

  it('moves the ext_proc counters in Envoy admin stats, one stream per request', async () => {
    const before = await envoy.stats('ext_proc');
    for (let i = 0; i < 5; i++) await (await fetch(`${envoy.gatewayUrl}/echo/ping`)).arrayBuffer();
    const after = await envoy.stats('ext_proc');
    const started = 'http.ingress_http.ext_proc.streams_started';
    expect(after.get(started)! - before.get(started)!).toBe(5);
    expect(after.get('http.ingress_http.ext_proc.streams_failed')).toBe(0);
  });

  it('answers a URL that matches no API with API Management 404 body, without calling the engine', async () => {
    const before = (await envoy.stats('ext_proc')).get('http.ingress_http.ext_proc.streams_started')!;
    const response = await fetch(`${envoy.gatewayUrl}/nothing-here`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ statusCode: 404, message: 'Resource not found' });
    expect((await envoy.stats('ext_proc')).get('http.ingress_http.ext_proc.streams_started')).toBe(before);
  });

  it('does not treat a longer first segment as the API suffix', async () => {
    const response = await fetch(`${envoy.gatewayUrl}/echoes/api`);
    expect(response.status).toBe(404);
  });

  it('routes /v1/mcp to the Koa service', async () => {
    const response = await fetch(`${envoy.gatewayUrl}/v1/mcp/`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ reachedService: '/v1/mcp/' });
  });

  it('fails promptly with a 5xx while the engine is down, and recovers when it is back, without restarting Envoy', async () => {
    await engine.shutdown(100);
    const started = Date.now();
    const down = await fetch(`${envoy.gatewayUrl}/echo/while-down`, { signal: AbortSignal.timeout(10_000) });
    const elapsed = Date.now() - started;
    expect(down.status).toBeGreaterThanOrEqual(500);
    expect(down.status).toBeLessThan(600);
    expect(elapsed).toBeLessThan(5000);
    expect(backend.received.some((request) => request.url.includes('while-down'))).toBe(false);

    engine = await startExtProcServer(
      { exchanges: passThroughExchanges },
      { host: '127.0.0.1', port: enginePort },
    );
    await until(
      async () => (await fetch(`${envoy.gatewayUrl}/echo/after-restart`)).status === 200,
      'Envoy to reach the restarted engine',
      { timeoutMs: 5000, everyMs: 100 },
    );
    expect(backend.received.at(-1)!.url).toBe('/base/after-restart');
  });
});
