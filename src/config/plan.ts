import { createServer } from 'node:net';
import type { BootstrapPlan, Endpoint } from '../../envoy/bootstrap.js';
import type { GatewayConfig } from './schema.js';

/** The configuration with every port decided: what Envoy, the engine and the service are started with. */
export interface RuntimePlan extends BootstrapPlan {
  readonly config: GatewayConfig;
}

/** Asks the kernel for a free TCP port on a host by binding port 0 and letting go of it. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

async function decide(endpoint: { host: string; port: number }): Promise<Endpoint> {
  return { host: endpoint.host, port: endpoint.port === 0 ? await freePort(endpoint.host) : endpoint.port };
}

export async function planRuntime(config: GatewayConfig): Promise<RuntimePlan> {
  const engineEndpoints = await Promise.all(
    config.engine.ports.map((port) => decide({ host: config.engine.host, port })),
  );
  return {
    config,
    gateway: await decide(config.gateway.http),
    admin: await decide(config.admin),
    engine: { endpoints: engineEndpoints, messageTimeoutMs: config.engine.messageTimeoutMs },
    service: await decide(config.service),
    apis: config.apis,
    backends: config.backends,
  };
}
