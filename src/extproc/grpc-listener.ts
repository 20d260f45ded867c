import { chmodSync, lstatSync, rmSync } from 'node:fs';
import { type Server, ServerCredentials } from '@grpc/grpc-js';
import type { HealthImplementation } from 'grpc-health-check';

/**
 * Where an engine's gRPC server listens: a TCP address, or a Unix domain socket (for an Envoy on the same host, as
 * a sidecar). The socket file is created readable and writable by its owner only (Envoy runs as the same user, or
 * is given access through the directory) and removed at shutdown.
 */
export type GrpcAddress = { readonly host: string; readonly port: number } | { readonly socketPath: string };

export interface GrpcListener {
  /** The bound port (useful when asked for port 0); 0 on a Unix domain socket. */
  readonly port: number;
  /**
   * Reports every health service NOT_SERVING, stops taking new calls, lets open ones finish for up to `graceMs`,
   * then cancels whatever is left (and removes the socket file).
   */
  shutdown(graceMs?: number): Promise<void>;
}

/** Binds `server` (its services and `health` already added) at `address`; what ext_proc and ext_authz share. */
export async function listenGrpc(
  server: Server,
  address: GrpcAddress,
  health: HealthImplementation,
  serviceNames: readonly string[],
): Promise<GrpcListener> {
  const socketPath = 'socketPath' in address ? address.socketPath : undefined;
  const target = 'socketPath' in address ? `unix:${address.socketPath}` : `${address.host}:${address.port}`;
  if (socketPath !== undefined) removeStaleSocket(socketPath);
  // The socket file takes its mode from the umask at bind time: no moment where another user could connect.
  const previousUmask = socketPath !== undefined ? process.umask(0o177) : undefined;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(target, ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(socketPath !== undefined ? 0 : bound),
    );
  }).finally(() => {
    if (previousUmask !== undefined) process.umask(previousUmask);
  });
  if (socketPath !== undefined) chmodSync(socketPath, 0o600);
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
      if (socketPath !== undefined) rmSync(socketPath, { force: true });
    },
  };
}

/**
 * A socket file left by an engine that was killed would make the bind fail: remove it. Anything else at that path
 * (a regular file, a directory) is not ours to remove, and the bind reports it.
 */
function removeStaleSocket(socketPath: string): void {
  try {
    if (lstatSync(socketPath).isSocket()) rmSync(socketPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
