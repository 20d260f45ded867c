import { chmodSync, lstatSync, rmSync } from 'node:fs';

/**
 * Where an engine's gRPC server listens: a TCP address, or a Unix domain socket (for an Envoy on the same host, as
 * a sidecar). The socket file is created readable and writable by its owner only (Envoy runs as the same user, or
 * is given access through the directory) and removed at shutdown.
 */
export type GrpcAddress = { readonly host: string; readonly port: number } | { readonly socketPath: string };

/**
 * Binds with `bind` at `address`; for a Unix domain socket, first replaces a socket file a killed engine left, and
 * binds under a umask that makes the file its owner's alone from the start (no moment where another user could
 * connect). Returns what `bind` returns (the port).
 */
export async function bindOwnerOnly(address: GrpcAddress, bind: () => Promise<number>): Promise<number> {
  if (!('socketPath' in address)) return bind();
  removeStaleSocket(address.socketPath);
  const previousUmask = process.umask(0o177);
  try {
    const port = await bind();
    chmodSync(address.socketPath, 0o600);
    return port;
  } finally {
    process.umask(previousUmask);
  }
}

/** The socket file goes with the server that made it. */
export function removeSocketFile(address: GrpcAddress): void {
  if ('socketPath' in address) rmSync(address.socketPath, { force: true });
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
