/**
 * gRPC over HTTP/2 on `node:http2` directly, for the engine's hot path: the ext_proc Process stream and the health
 * Check Envoy calls on the engine cluster. @grpc/grpc-js serves the same bytes, but its per-call machinery
 * (metadata objects, interceptors, filter stacks, status bookkeeping) cost the engine more CPU per request than
 * everything the engine itself does for a pass-through request (bench/transport.ts: the "Node HTTP/2 floor" row is
 * node:http2 alone). The protocol here is what Envoy's gRPC client speaks: POST, `content-type: application/grpc`,
 * length-prefixed messages without compression, the status in trailers (or in the headers, "trailers-only", when
 * nothing was sent). https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md
 */
import { EventEmitter } from 'node:events';
import http2 from 'node:http2';
import protobuf from 'protobufjs/light.js';
import { bindOwnerOnly, type GrpcAddress, removeSocketFile } from './grpc-listener.js';
import { GrpcStatus } from './grpc-status.js';

export { GrpcStatus };

/** One frame: the compressed flag (always 0 here), the length in 4 big-endian bytes, the message. */
function frame(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(5 + message.length);
  framed[0] = 0;
  framed.writeUInt32BE(message.length, 1);
  framed.set(message, 5);
  return framed;
}

const responseHeaders = { ':status': 200, 'content-type': 'application/grpc' } as const;

/**
 * Envoy resets every ext_proc stream with INTERNAL_ERROR once it is done with it (its graceful close is off: see
 * the bootstrap's `layered_runtime`). Node turns each such reset into an `ERR_HTTP2_STREAM_ERROR` and reads the
 * error's `stack` as it destroys the stream (node:internal/streams/destroy's checkError, against a V8 leak), which
 * formats every frame: 3 % of the engine's CPU on the sample policy under load, for a string nothing reads. Those
 * errors get their first line only; every other error is formatted by the function that was there before.
 */
function shortStreamResetStacks(): void {
  const formatted = Error.prepareStackTrace;
  if (formatted === undefined || streamResetStacksShortened) return;
  streamResetStacksShortened = true;
  Error.prepareStackTrace = (error: unknown, frames: NodeJS.CallSite[]) =>
    error instanceof Error && (error as { code?: unknown }).code === 'ERR_HTTP2_STREAM_ERROR'
      ? String(error)
      : formatted(error as Error, frames);
}
let streamResetStacksShortened = false;

/**
 * One server call over one HTTP/2 stream, bidirectional. Events: `data` (each decoded message, in order), `end` (the
 * client half-closed), `cancelled` (the client reset the stream before half-closing), `error` (the stream failed).
 * The first write sends the response headers; `end` and `fail` send the status.
 */
export class GrpcServerCall<In, Out> extends EventEmitter {
  cancelled = false;
  private finished = false;
  private headersSent = false;
  /** Bytes of a message not yet complete: chunks boundaries fall anywhere. */
  private pending: Buffer | undefined;

  constructor(
    private readonly stream: http2.ServerHttp2Stream,
    private readonly decode: (bytes: Buffer) => In,
    private readonly encode: (message: Out) => Uint8Array,
    private readonly maxMessageBytes: number,
  ) {
    super();
    stream.on('data', (chunk: Buffer) => this.receive(chunk));
    stream.on('end', () => {
      if (this.pending !== undefined && !this.finished)
        this.fail(GrpcStatus.INTERNAL, 'the stream ended inside a message');
      this.emit('end');
    });
    // A reset (Envoy tore the HTTP exchange down) arrives as `aborted` before the stream closes.
    stream.on('aborted', () => this.cancel());
    stream.on('close', () => {
      if (!this.finished) this.cancel();
    });
    // No Error object: each reset Envoy sends already cost Node one (see shortStreamResetStacks).
    stream.on('error', () => this.emit('error'));
  }

  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  /** Whether a message or the status can still be written. */
  get writable(): boolean {
    return !this.finished && !this.cancelled && !this.stream.destroyed && !this.stream.closed;
  }

  write(message: Out): boolean {
    if (!this.writable) return false;
    if (!this.headersSent) {
      this.headersSent = true;
      this.stream.respond(responseHeaders, { waitForTrailers: true });
    }
    return this.stream.write(frame(this.encode(message)));
  }

  /** Ends the call with OK. */
  end(): void {
    this.finish(GrpcStatus.OK, '');
  }

  /** Ends the call with an error status; the message is the client's to see (grpc-message). */
  fail(code: GrpcStatus, message: string): void {
    this.finish(code, message);
  }

  /** Ends the call without a status: RST_STREAM (CANCEL), for a client that stopped listening. */
  reset(): void {
    if (this.finished || this.stream.destroyed || this.stream.closed) return;
    this.finished = true;
    this.stream.on('error', () => {});
    this.stream.close(http2.constants.NGHTTP2_CANCEL);
  }

  private finish(code: GrpcStatus, message: string): void {
    if (!this.writable) return;
    this.finished = true;
    const status = {
      'grpc-status': String(code),
      ...(message ? { 'grpc-message': encodeURIComponent(message) } : {}),
    };
    this.stream.on('error', () => {});
    if (!this.headersSent) {
      this.headersSent = true;
      this.stream.respond({ ...responseHeaders, ...status }, { endStream: true });
      return;
    }
    this.stream.once('wantTrailers', () => this.stream.sendTrailers(status));
    this.stream.end();
  }

  private cancel(): void {
    if (this.cancelled || this.finished) return;
    this.cancelled = true;
    this.emit('cancelled');
  }

  private receive(chunk: Buffer): void {
    let bytes = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = undefined;
    while (bytes.length >= 5 && !this.finished) {
      if (bytes[0] !== 0) {
        this.fail(GrpcStatus.UNIMPLEMENTED, 'compressed messages are not accepted');
        return;
      }
      const length = bytes.readUInt32BE(1);
      if (length > this.maxMessageBytes) {
        this.fail(
          GrpcStatus.RESOURCE_EXHAUSTED,
          `a message of ${length} bytes is over the limit of ${this.maxMessageBytes}`,
        );
        return;
      }
      if (bytes.length < 5 + length) break;
      let message: In;
      try {
        message = this.decode(bytes.subarray(5, 5 + length));
      } catch {
        this.fail(GrpcStatus.INTERNAL, 'the message could not be decoded');
        return;
      }
      bytes = bytes.subarray(5 + length);
      this.emit('data', message);
    }
    if (bytes.length > 0 && !this.finished) this.pending = bytes;
  }
}

/** A method's handler: given the stream of one call (its request headers already checked). */
export type GrpcMethod = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void;

export type HealthStatus = 'SERVING' | 'NOT_SERVING';

/**
 * `grpc.health.v1.Health/Check`: the status of the named service ('' for the server as a whole), NOT_FOUND for a
 * name it does not serve. Watch is not offered (UNIMPLEMENTED): Envoy's health checker and Kubernetes' gRPC probes
 * use Check.
 */
export function healthCheckMethod(statuses: ReadonlyMap<string, HealthStatus>): GrpcMethod {
  return (stream) => {
    const call = new GrpcServerCall<string, HealthStatus>(
      stream,
      serviceOfCheckRequest,
      (status) => Uint8Array.of(0x08, status === 'SERVING' ? 1 : 2),
      4096,
    );
    call.on('data', (service: string) => {
      const status = statuses.get(service);
      if (status === undefined) return call.fail(GrpcStatus.NOT_FOUND, `unknown service "${service}"`);
      call.write(status);
      call.end();
    });
    call.on('error', () => {});
  };
}

/** HealthCheckRequest { string service = 1; } */
function serviceOfCheckRequest(bytes: Buffer): string {
  const reader = protobuf.Reader.create(bytes);
  let service = '';
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 === 1 && (tag & 7) === 2) service = reader.string();
    else reader.skipType(tag & 7);
  }
  return service;
}

export interface GrpcH2Listener {
  /** The bound port; 0 on a Unix domain socket. */
  readonly port: number;
  /** Stops new connections and calls, lets open calls finish for up to `graceMs`, then resets what is left. */
  shutdown(graceMs?: number): Promise<void>;
}

/**
 * Serves `methods` (by path, `/package.Service/Method`) on cleartext HTTP/2 at `address`. Windows are opened wide:
 * a buffered body crosses as one message of up to the message limit, and the default 64 KiB window would make each
 * such message wait on window updates.
 */
export async function listenGrpcH2(
  address: GrpcAddress,
  methods: ReadonlyMap<string, GrpcMethod>,
  windowBytes: number,
): Promise<GrpcH2Listener> {
  shortStreamResetStacks();
  const sessions = new Set<http2.ServerHttp2Session>();
  const server = http2.createServer({
    settings: { initialWindowSize: Math.min(windowBytes, 2 ** 31 - 1) },
    // A large buffered body is held as it crosses; the default (10 MB) refuses new streams meanwhile.
    maxSessionMemory: 64,
  });
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    session.on('error', () => {});
    session.setLocalWindowSize(Math.min(windowBytes, 2 ** 31 - 1));
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    const method = methods.get(String(headers[':path']));
    if (headers[':method'] !== 'POST' || !String(headers['content-type']).startsWith('application/grpc')) {
      stream.respond({ ':status': 415 }, { endStream: true });
      return;
    }
    if (method === undefined) {
      stream.respond(
        { ...responseHeaders, 'grpc-status': String(GrpcStatus.UNIMPLEMENTED) },
        { endStream: true },
      );
      return;
    }
    method(stream, headers);
  });
  const port = await bindOwnerOnly(
    address,
    () =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        const ready = () => {
          server.off('error', reject);
          const bound = server.address();
          resolve(typeof bound === 'object' && bound !== null ? bound.port : 0);
        };
        if ('socketPath' in address) server.listen(address.socketPath, ready);
        else server.listen(address.port, address.host, ready);
      }),
  );
  return {
    port,
    async shutdown(graceMs = 5000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // GOAWAY: no new streams on open connections; the calls in flight go on.
      for (const session of sessions) session.close();
      const timer = setTimeout(() => {
        for (const session of sessions) session.destroy();
      }, graceMs);
      await closed;
      clearTimeout(timer);
      removeSocketFile(address);
    },
  };
}
