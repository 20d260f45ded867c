import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Endpoint } from '../envoy/bootstrap/plan.js';

export interface ManagementServer {
  /** The port it listens on (the endpoint's, or the one the system chose for port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/** Serves the management app on its loopback address (Envoy's management listener is the way in). */
export function serveManagement(app: Koa, endpoint: Endpoint): Promise<ManagementServer> {
  const server = createServer(app.callback());
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(endpoint.port, endpoint.host, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
