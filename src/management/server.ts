import { createServer } from 'node:http';
import type Koa from 'koa';
import type { Endpoint } from '../../envoy/bootstrap.js';

export interface ManagementServer {
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
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
