import { Server, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { ExchangeFactory } from '../extproc/exchange.js';
import type { GrpcAddress } from '../extproc/grpc-listener.js';
import type { StreamObserver } from '../extproc/stream.js';
import { answerCheck, type CheckObserver } from './check.js';
import { listenGrpc } from './listener.js';
import type { CheckRequest, CheckResponse } from './messages.js';
import { AuthorizationService, authorizationServiceName } from './proto.js';

export interface ExtAuthzServerOptions {
  /** Makes the per-request handler; called once per Check (= one HTTP request). */
  readonly exchanges: ExchangeFactory;
  /** The ext_proc server's observer: a failed or refused Check is reported as a failed request-headers phase. */
  readonly observer?: Partial<StreamObserver>;
}

export interface ListeningExtAuthzServer {
  /** The bound port (useful when asked for port 0); 0 on a Unix domain socket. */
  readonly port: number;
  /** Checks being answered now. */
  activeStreams(): number;
  /** Reports NOT_SERVING, lets running checks finish for up to `graceMs`, then cancels whatever is left. */
  shutdown(graceMs?: number): Promise<void>;
}

/**
 * The gRPC server Envoy's ext_authz filter talks to (`envoy.service.auth.v3.Authorization`), plus the standard gRPC
 * health service (overall status and the Authorization service).
 */
export async function startExtAuthzServer(
  options: ExtAuthzServerOptions,
  address: GrpcAddress,
): Promise<ListeningExtAuthzServer> {
  const server = new Server({ 'grpc.enable_channelz': 0 });
  const health = new HealthImplementation({ '': 'SERVING', [authorizationServiceName]: 'SERVING' });
  health.addToServer(server);
  const onHandlerError = options.observer?.onHandlerError;
  const observer: CheckObserver = {
    onRefusedExchange: (reason) => onHandlerError?.(new Error(`ext_authz: ${reason}`), 'request_headers'),
  };
  let running = 0;
  server.addService(AuthorizationService.service, {
    Check(call: ServerUnaryCall<CheckRequest, CheckResponse>, callback: sendUnaryData<CheckResponse>) {
      running++;
      answerCheck(call.request, options.exchanges, observer).then(
        (response) => {
          running--;
          callback(null, response);
        },
        // answerCheck turns every failure into a 500 answer; this is for a bug in that.
        (error: unknown) => {
          running--;
          callback(error instanceof Error ? error : new Error(String(error)));
        },
      );
    },
  });
  const listener = await listenGrpc(server, address, health, [authorizationServiceName]);
  return {
    port: listener.port,
    activeStreams: () => running,
    shutdown: (graceMs) => listener.shutdown(graceMs),
  };
}
