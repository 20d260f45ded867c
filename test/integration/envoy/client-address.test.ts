import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfig } from '../../../src/config/load.js';
import { freePort, planRuntime } from '../../../src/config/plan.js';
import { buildBootstrap } from '../../../src/envoy/bootstrap/bootstrap.js';
import { extensionNamed } from '../../../src/envoy/config-types.js';
import { clientAddressHeader } from '../../../src/envoy/contract.js';
import { type RunningEnvoy, startEnvoy } from '../../processes/envoy.js';

/**
 * The contract the service's abuse limits rest on: on every request Envoy routes to the service, the client
 * address header is the address Envoy determined — the TCP peer, or with `trustedProxyHops` N the N-th
 * X-Forwarded-For entry from the end — and never a value the client wrote. Real Envoy, a recording service.
 */
describe('the client address Envoy hands the service', () => {
  let service: Server;
  let seen: Record<string, string | string[] | undefined>[];
  const envoys: RunningEnvoy[] = [];
  let direct: RunningEnvoy;
  let behindProxy: RunningEnvoy;

  async function envoyWith(trustedProxyHops: number): Promise<RunningEnvoy> {
    const envoy = await startEnvoy({
      gateway: { host: '127.0.0.1', port: await freePort() },
      admin: { host: '127.0.0.1', port: await freePort() },
      // The service routes run no policy: the engine is never asked.
      engine: { endpoints: [{ host: '127.0.0.1', port: await freePort() }], messageTimeoutMs: 500 },
      service: { host: '127.0.0.1', port: (service.address() as AddressInfo).port },
      apis: [],
      trustedProxyHops,
    });
    envoys.push(envoy);
    return envoy;
  }

  beforeAll(async () => {
    seen = [];
    service = createServer((req, res) => {
      seen.push(req.headers);
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    [direct, behindProxy] = await Promise.all([envoyWith(0), envoyWith(1)]);
  });
  afterAll(async () => {
    await Promise.all(envoys.map((envoy) => envoy.stop()));
    await new Promise((resolve) => service.close(resolve));
  });

  /** GET a service path from a chosen loopback source address; returns the headers the service received. */
  async function headersSeen(
    envoy: RunningEnvoy,
    from: string,
    headers: Record<string, string>,
  ): Promise<Record<string, string | string[] | undefined>> {
    const before = seen.length;
    const url = new URL('/v1/register', envoy.gatewayUrl);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, { method: 'GET', headers, localAddress: from }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    expect(seen.length).toBe(before + 1);
    return seen.at(-1)!;
  }

  it('is the TCP peer, whatever X-Forwarded-For or a forged copy of the header says', async () => {
    const headers = await headersSeen(direct, '127.0.0.5', {
      'x-forwarded-for': '203.0.113.9',
      [clientAddressHeader]: '198.51.100.1',
    });
    expect(headers[clientAddressHeader]).toBe('127.0.0.5');
    // Envoy still appends the peer to X-Forwarded-For: the first entry is the client's own text.
    expect(String(headers['x-forwarded-for']).split(',')[0]).toBe('203.0.113.9');
  });

  it('with one trusted proxy, is the entry that proxy appended, not the ones before it', async () => {
    const headers = await headersSeen(behindProxy, '127.0.0.6', {
      'x-forwarded-for': '198.51.100.7, 203.0.113.9',
      [clientAddressHeader]: '198.51.100.7',
    });
    expect(headers[clientAddressHeader]).toBe('203.0.113.9');
  });

  it('with one trusted proxy but no X-Forwarded-For, falls back to the TCP peer', async () => {
    const headers = await headersSeen(behindProxy, '127.0.0.7', {});
    expect(headers[clientAddressHeader]).toBe('127.0.0.7');
  });
});

describe('gateway.trustedProxyHops', () => {
  /** xff_num_trusted_hops of every gateway listener's connection manager. */
  async function trustedHops(yaml: string): Promise<unknown[]> {
    const bootstrap = buildBootstrap(await planRuntime(parseConfig(yaml, 'gateway.yaml')));
    return bootstrap.static_resources.listeners.map(
      (listener) =>
        extensionNamed(listener.filter_chains[0]!.filters, 'envoy.filters.network.http_connection_manager')
          .typed_config.xff_num_trusted_hops,
    );
  }

  it("is 0 by default (the client is the TCP peer) and becomes Envoy's xff_num_trusted_hops", async () => {
    expect(await trustedHops('gateway: { http: { port: 0 } }')).toEqual([0]);
    expect(await trustedHops('gateway: { http: { port: 0 }, trustedProxyHops: 2 }')).toEqual([2]);
  });

  it('refuses a negative or absurd count, naming the key', () => {
    for (const value of ['-1', '11', '1.5']) {
      expect(() => parseConfig(`gateway: { trustedProxyHops: ${value} }`, 'gateway.yaml')).toThrow(
        ConfigError,
      );
      expect(() => parseConfig(`gateway: { trustedProxyHops: ${value} }`, 'gateway.yaml')).toThrow(
        /gateway\.trustedProxyHops/,
      );
    }
  });
});
