import { Server, type ServerDuplexStream } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { ExchangeFactory } from './exchange.js';
import { type GrpcAddress, listenGrpc } from './grpc-listener.js';
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

/** Where the server listens (TCP or a Unix domain socket). */
export type ExtProcAddress = GrpcAddress;

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

  const listener = await listenGrpc(server, address, health, [externalProcessorServiceName]);
  return {
    port: listener.port,
    activeStreams: () => open,
    shutdown: (graceMs) => listener.shutdown(graceMs),
  };
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
