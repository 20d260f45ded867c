import { type Server, ServerCredentials } from '@grpc/grpc-js';
import type { HealthImplementation } from 'grpc-health-check';
import { bindOwnerOnly, type GrpcAddress, removeSocketFile } from '../extproc/grpc-listener.js';

// The ext_authz server is @grpc/grpc-js's (one Check per request: its per-call machinery is cheap enough there);
// the engine's ext_proc server is its own HTTP/2 one (extproc/grpc-h2.ts), and shares only the address handling.

export interface GrpcListener {
  /** The bound port (useful when asked for port 0); 0 on a Unix domain socket. */
  readonly port: number;
  /**
   * Reports every health service NOT_SERVING, stops taking new calls, lets open ones finish for up to `graceMs`,
   * then cancels whatever is left (and removes the socket file).
   */
  shutdown(graceMs?: number): Promise<void>;
}

/** Binds `server` (its services and `health` already added) at `address`. */
export async function listenGrpc(
  server: Server,
  address: GrpcAddress,
  health: HealthImplementation,
  serviceNames: readonly string[],
): Promise<GrpcListener> {
  const target = 'socketPath' in address ? `unix:${address.socketPath}` : `${address.host}:${address.port}`;
  const port = await bindOwnerOnly(
    address,
    () =>
      new Promise<number>((resolve, reject) => {
        server.bindAsync(target, ServerCredentials.createInsecure(), (error, bound) =>
          error ? reject(error) : resolve('socketPath' in address ? 0 : bound),
        );
      }),
  );
  return {
    port,
    async shutdown(graceMs = 5000) {
      for (const name of ['', ...serviceNames]) health.setStatus(name, 'NOT_SERVING');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      removeSocketFile(address);
    },
  };
}
