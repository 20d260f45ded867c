import type http2 from 'node:http2';
import type { ExchangeFactory, StreamContext } from './exchange.js';
import {
  type GrpcMethod,
  GrpcServerCall,
  type HealthStatus,
  healthCheckMethod,
  listenGrpcH2,
} from './grpc-h2.js';
import type { GrpcAddress } from './grpc-listener.js';
import type { ProcessingRequest, ProcessingResponse } from './messages.js';
import { decodeProcessingRequest, encodeProcessingResponse, externalProcessorServiceName } from './proto.js';
import { ExtProcStream, halfClosedStreamGraceMs, type StreamObserver } from './stream.js';

export interface ExtProcServerOptions {
  /** Makes the per-request handler; called once per gRPC stream (= one HTTP exchange). */
  readonly exchanges: ExchangeFactory;
  readonly observer?: Partial<StreamObserver>;
  /** Largest message accepted (a buffered body travels as one message). */
  readonly maxMessageBytes?: number;
  /** How long a stream Envoy half-closed may stay open before the engine resets it (stream.ts). */
  readonly halfClosedGraceMs?: number;
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
  const maxMessageBytes = options.maxMessageBytes ?? 16 * 1024 * 1024;
  const health = new Map<string, HealthStatus>([
    ['', 'SERVING'],
    [externalProcessorServiceName, 'SERVING'],
  ]);
  const observer: StreamObserver = {
    onHandlerError: options.observer?.onHandlerError ?? (() => {}),
    onProtocolError: options.observer?.onProtocolError ?? (() => {}),
  };
  let open = 0;
  const process: GrpcMethod = (stream, headers) => {
    open++;
    stream.once('close', () => open--);
    const call = new GrpcServerCall<ProcessingRequest, ProcessingResponse>(
      stream,
      decodeProcessingRequest,
      encodeProcessingResponse,
      maxMessageBytes,
    );
    new ExtProcStream(
      call,
      options.exchanges,
      observer,
      streamContext(headers),
      options.halfClosedGraceMs ?? halfClosedStreamGraceMs,
    );
  };
  const listener = await listenGrpcH2(
    address,
    new Map([
      [`/${externalProcessorServiceName}/Process`, process],
      ['/grpc.health.v1.Health/Check', healthCheckMethod(health)],
    ]),
    maxMessageBytes,
  );
  return {
    port: listener.port,
    activeStreams: () => open,
    async shutdown(graceMs) {
      for (const name of health.keys()) health.set(name, 'NOT_SERVING');
      await listener.shutdown(graceMs);
    },
  };
}

/** Envoy's trace context for the ext_proc call, when its tracer put one on the stream. */
function streamContext(headers: http2.IncomingHttpHeaders): StreamContext | undefined {
  const traceparent = headers.traceparent;
  if (typeof traceparent !== 'string') return undefined;
  const tracestate = headers.tracestate;
  return { traceHeaders: typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent } };
}
