import { chmodSync, lstatSync, rmSync } from 'node:fs';
import { Server, ServerCredentials, type ServerDuplexStream } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { ExchangeFactory } from './exchange.js';
import type { ProcessingRequest, ProcessingResponse } from './messages.js';
import { externalProcessorServiceName, extProcServerService } from './proto.js';
import { ExtProcStream, type StreamObserver } from './stream.js';

export interface ExtProcServerOptions {
  /** Makes the per-request handler; called once per gRPC stream (= one HTTP exchange). */
  readonly exchanges: ExchangeFactory;
  readonly observer?: Partial<StreamObserver>;
  /** Largest message accepted (a buffered body travels as one message). */
  readonly maxMessageBytes?: number;
}

/**
 * Where the server listens: a TCP address, or a Unix domain socket (for an Envoy on the same host, as a sidecar).
 * The socket file is created readable and writable by its owner only (Envoy runs as the same user, or is given
 * access through the directory) and removed at shutdown.
 */
export type ExtProcAddress =
  | { readonly host: string; readonly port: number }
  | { readonly socketPath: string };

export interface ListeningExtProcServer {
  /** The bound port (useful when asked for port 0); 0 on a Unix domain socket. */
  readonly port: number;
  /** Streams currently open. */
  activeStreams(): number;
  /**
   * Stops taking new streams, reports NOT_SERVING to health checks, lets open streams finish for up to `graceMs`,
   * then cancels whatever is left.
   */
  shutdown(graceMs?: number): Promise<void>;
}

/**
 * The gRPC server Envoy's ext_proc filter talks to, plus the standard gRPC health service (overall status and
 * `envoy.service.ext_proc.v3.ExternalProcessor`).
 */
export async function startExtProcServer(
  options: ExtProcServerOptions,
  address: ExtProcAddress,
): Promise<ListeningExtProcServer> {
  const server = new Server({
    // Channelz keeps per-call bookkeeping we never read; it costs on the hot path.
    'grpc.enable_channelz': 0,
    'grpc.max_receive_message_length': options.maxMessageBytes ?? 16 * 1024 * 1024,
  });
  const health = new HealthImplementation({ '': 'SERVING', [externalProcessorServiceName]: 'SERVING' });
  health.addToServer(server);

  const observer: StreamObserver = {
    onHandlerError: options.observer?.onHandlerError ?? (() => {}),
    onProtocolError: options.observer?.onProtocolError ?? (() => {}),
  };
  let open = 0;
  server.addService(extProcServerService, {
    Process(call: ServerDuplexStream<ProcessingRequest, ProcessingResponse>) {
      open++;
      const release = onceOnly(() => open--);
      call.on('close', release);
      call.on('finish', release);
      call.on('cancelled', release);
      call.on('error', release);
      new ExtProcStream(call, options.exchanges, observer);
    },
  });

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
    activeStreams: () => open,
    async shutdown(graceMs = 5000) {
      health.setStatus('', 'NOT_SERVING');
      health.setStatus(externalProcessorServiceName, 'NOT_SERVING');
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

/**
 * `action`, at most once. (Built by a call rather than written as a named closure in the handler: the TypeScript
 * loader keeps function names, which costs a property definition for every closure it names, once per stream.)
 */
function onceOnly(action: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    action();
  };
}
