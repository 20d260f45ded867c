import { responsePhaseMetadata } from '../envoy/contract.js';
import type {
  Exchange,
  ExchangeFactory,
  PhaseDeadline,
  PhaseRequests,
  PhaseResult,
  StreamContext,
  TrailersResult,
} from './exchange.js';
import { GrpcStatus } from './grpc-status.js';
import { attributeValues, headerFieldsFromMap, headerMutation } from './headers.js';
import type {
  CommonResponse,
  HttpBody,
  HttpHeaders,
  HttpTrailers,
  ProcessingMode,
  ProcessingRequest,
  ProcessingResponse,
  RequestKind,
  Struct,
} from './messages.js';

/**
 * Where one ext_proc stream (= one HTTP exchange) stands. Envoy sends the phases in this order and skips those the
 * processing mode leaves out; a message that cannot follow the current state is a protocol violation.
 */
export type StreamState =
  /** Nothing received yet. A response phase may come first when the request phase was skipped for the route. */
  | 'idle'
  /** Request headers answered; the request body (buffered) or trailers may follow, or the response. */
  | 'request_headers'
  /** Request body answered; more body chunks (streamed) or trailers may follow, or the response. */
  | 'request_body'
  /** Request trailers answered; only the response can follow. */
  | 'request_trailers'
  /** Response headers answered; response body or trailers may follow. */
  | 'response_headers'
  /** Response body answered; more chunks or trailers may follow. */
  | 'response_body'
  /** Response trailers answered: the exchange is complete. */
  | 'response_trailers'
  /** An immediate response was sent, or the stream ended or failed: nothing more is read or written. */
  | 'closed';

/** The transition table: which message kinds may arrive in each state. */
const allowedNext: Readonly<Record<StreamState, readonly RequestKind[]>> = {
  idle: ['request_headers', 'response_headers'],
  request_headers: ['request_body', 'request_trailers', 'response_headers'],
  request_body: ['request_body', 'request_trailers', 'response_headers'],
  request_trailers: ['response_headers'],
  response_headers: ['response_body', 'response_trailers'],
  response_body: ['response_body', 'response_trailers'],
  response_trailers: [],
  closed: [],
};

export interface StreamObserver {
  /** A phase handler threw; the client got a 500. */
  onHandlerError(error: unknown, phase: RequestKind): void;
  onProtocolError(message: string): void;
}

/** What a stream needs of its gRPC call (grpc-h2.ts's GrpcServerCall): one Process call, Envoy at the other end. */
export interface ExtProcCall {
  on(event: 'data', listener: (message: ProcessingRequest) => void): unknown;
  on(event: 'end' | 'cancelled' | 'error', listener: () => void): unknown;
  readonly cancelled: boolean;
  readonly destroyed: boolean;
  readonly writable: boolean;
  write(response: ProcessingResponse): unknown;
  /** Ends the call with OK. */
  end(): void;
  /** Ends the call with an error status. */
  fail(code: GrpcStatus, message: string): void;
  /** Ends the call without a status (RST_STREAM). */
  reset(): void;
}

/**
 * How long a stream Envoy half-closed may stay open before the engine resets it. Envoy resets it itself, at once
 * (graceful close off) or when its remote-close timeout fires (`envoy.filters.http.ext_proc.
 * remote_close_timeout_milliseconds`, 1 s by default); this only bounds what a peer that never resets would hold,
 * long after any Envoy would have stopped listening.
 */
export const halfClosedStreamGraceMs = 30_000;

/**
 * Drives one Exchange over one gRPC stream. Messages are handled strictly one after another (a later message waits
 * for the earlier one's answer) because Envoy expects exactly one response per request message, in order.
 */
export class ExtProcStream {
  private state: StreamState = 'idle';
  private queue: Promise<void> = Promise.resolve();
  private readonly exchange: Exchange;
  /** The phases the answer to the request headers asked for (its `mode_override`), when it stated them. */
  private laterPhases: ProcessingMode | undefined;
  /**
   * Envoy half-closed the stream: its filter is gone (the HTTP exchange finished or was torn down), so an answer
   * still being computed has no reader — and neither has the stream's status (see `halfClosed`).
   */
  private envoyHalfClosed = false;
  /** The call was cancelled or failed: nothing at all may be written to it any more, not even a status. */
  private callGone = false;
  /**
   * The message being answered, while its handler runs (see `extend`): whether Envoy waits for the answer, and
   * until when (performance.now()) the one extension Envoy grants per phase was asked for.
   */
  private pending: { readonly answered: boolean; grantedUntil: number | undefined } | undefined;

  constructor(
    private readonly call: ExtProcCall,
    factory: ExchangeFactory,
    private readonly observer: StreamObserver,
    streamContext?: StreamContext,
    private readonly halfClosedGraceMs = halfClosedStreamGraceMs,
  ) {
    const deadline: PhaseDeadline = { extend: (ms) => this.extend(ms) };
    this.exchange = factory({ ...streamContext, deadline });
    call.on('data', (message: ProcessingRequest) => {
      this.queue = this.queue.then(() => this.receive(message));
    });
    // Envoy half-closes (and, without graceful close, then resets) the stream when the HTTP exchange ends or is
    // torn down. The flags are set at once, not in the queue, so an answer computed meanwhile is never written.
    call.on('end', () => {
      this.envoyHalfClosed = true;
      this.halfClosed();
    });
    call.on('cancelled', () => this.gone());
    call.on('error', () => this.gone());
  }

  get currentState(): StreamState {
    return this.state;
  }

  /**
   * Whether a phase answer may no longer be written: the exchange is over, or Envoy is done with the stream. A
   * method rather than a comparison so TypeScript does not narrow `state` across an await.
   */
  private closed(): boolean {
    return this.state === 'closed' || this.envoyHalfClosed || !this.writable();
  }

  /** Whether anything (an answer, the final status) can still go out on the call. */
  private writable(): boolean {
    return !this.callGone && !this.call.cancelled && !this.call.destroyed && this.call.writable;
  }

  /** The one place a message is written: never to a call that is cancelled, failed or ended. */
  private send(response: ProcessingResponse): void {
    if (this.writable()) this.call.write(response);
  }

  /**
   * Asks Envoy to wait `ms` more for the pending answer: one `override_message_timeout` message, written before the
   * answer (Envoy reads it whenever a phase is pending). Envoy restarts the phase's timer with it once per phase
   * (ext_proc.cc `restartMessageTimer`), so a later ask is told what is left of the first.
   */
  private extend(ms: number): number {
    const pending = this.pending;
    if (pending === undefined || !pending.answered || this.closed()) return Number.POSITIVE_INFINITY;
    const now = performance.now();
    if (pending.grantedUntil !== undefined) return Math.max(0, pending.grantedUntil - now);
    const granted = Math.max(1, Math.ceil(ms));
    this.send({
      override_message_timeout: { seconds: Math.floor(granted / 1000), nanos: (granted % 1000) * 1_000_000 },
    });
    pending.grantedUntil = now + granted;
    return granted;
  }

  /** Ends the call with OK, unless it is already cancelled, failed or ended. */
  private endCall(): void {
    if (this.writable()) this.call.end();
  }

  /**
   * Envoy half-closed: its filter is destroyed, so nothing the engine writes has a reader. A phase still being
   * computed finishes first (its answer is dropped); then the engine writes nothing, not even OK, and leaves the
   * stream for Envoy to reset when its remote-close timeout (1 s) fires. Envoy 1.40 can segfault when a status or
   * a reset of the engine's reaches a stream it half-closed from a destroyed filter (graceful close), the longer
   * the exchange lived the likelier (docs/security.md, "Request bodies").
   */
  private halfClosed(): void {
    this.queue = this.queue.then(() => {
      if (this.state === 'closed') return;
      this.state = 'closed';
      this.exchange.end?.();
      if (this.writable()) setTimeout(() => this.call.reset(), this.halfClosedGraceMs).unref();
    });
  }

  /** The call was cancelled (Envoy reset it) or failed: no answer and no status can be written any more. */
  private gone(): void {
    this.callGone = true;
    this.queue = this.queue.then(() => {
      if (this.state === 'closed') return;
      this.state = 'closed';
      this.exchange.end?.();
    });
  }

  private async receive(message: ProcessingRequest): Promise<void> {
    if (this.state === 'closed') return;
    const kind = message.request;
    if (!kind || !allowedNext[this.state].includes(kind)) {
      this.fail(`ext_proc message "${kind ?? 'none'}" cannot follow state "${this.state}"`);
      return;
    }
    // Observability mode: Envoy ignores answers, so we only watch.
    const answer = !message.observability_mode;
    this.pending = { answered: answer, grantedUntil: undefined };
    try {
      const response = await this.dispatch(kind, message);
      this.pending = undefined;
      if (this.closed()) return;
      if (response.immediate_response) {
        if (answer) this.send(response);
        this.state = 'closed';
        this.exchange.end?.();
        this.endCall();
        return;
      }
      this.state = kind;
      // The response headers' answer may change the response body's mode (stream a body it only watches).
      if (kind === 'request_headers' || (kind === 'response_headers' && response.mode_override))
        this.laterPhases = response.mode_override;
      if (!answer) return;
      this.send(response);
      if (this.lastAnswer(message)) {
        // Nothing more will cross this stream: end it with OK now rather than wait for Envoy to end it. Envoy
        // then goes on without the engine for the rest of the request.
        this.state = 'closed';
        this.exchange.end?.();
        this.endCall();
      }
    } catch (error) {
      this.pending = undefined;
      if (this.closed()) return;
      this.observer.onHandlerError(error, kind);
      if (answer) {
        this.send({
          immediate_response: {
            status: { code: 500 },
            headers: headerMutation([{ name: 'content-type', value: 'application/json' }]),
            body: Buffer.from('{"statusCode":500,"message":"Internal server error"}'),
            details: 'portcullis_engine_error',
          },
        });
      }
      this.state = 'closed';
      this.exchange.end?.();
      this.endCall();
    }
  }

  /**
   * Whether the answer just written to `message` is the last Envoy will ask for, so the engine ends the call with
   * it: the exchange's state goes at once rather than when Envoy tears the stream down, and an Envoy that keeps
   * graceful close on (an operator's, in plugin mode) is not left to time out a stream the engine would answer with
   * nothing (`halfClosed`). Nothing follows the end of the response; before it, what the request headers' answer
   * turned on (`mode_override`) decides.
   * Trailers are never sent (SKIP in the filter configuration, and the override leaves them unchanged). Without an
   * override nothing is assumed.
   */
  private lastAnswer(message: ProcessingRequest): boolean {
    if (message.response_headers?.end_of_stream || message.response_body?.end_of_stream) return true;
    const later = this.laterPhases;
    if (later === undefined) return false;
    const noResponsePhases = later.response_header_mode === 'SKIP' && later.response_body_mode === 'NONE';
    if (message.request_headers)
      return (
        noResponsePhases &&
        (later.request_body_mode === 'NONE' || message.request_headers.end_of_stream === true)
      );
    if (message.request_body) return noResponsePhases && message.request_body.end_of_stream === true;
    return message.response_headers !== undefined && later.response_body_mode === 'NONE';
  }

  private fail(message: string): void {
    this.observer.onProtocolError(message);
    this.state = 'closed';
    this.exchange.end?.();
    if (!this.writable()) return;
    this.call.fail(GrpcStatus.INVALID_ARGUMENT, message);
  }

  private async dispatch(kind: RequestKind, message: ProcessingRequest): Promise<ProcessingResponse> {
    const exchange = this.exchange;
    switch (kind) {
      case 'request_headers':
        return headersResponse(kind, await exchange.requestHeaders(head(message.request_headers, message)));
      case 'response_headers': {
        const result = exchange.responseHeaders
          ? await exchange.responseHeaders(head(message.response_headers, message))
          : { action: 'continue' as const };
        return headersResponse(kind, result);
      }
      case 'request_body':
      case 'response_body': {
        const body = message[kind] as HttpBody;
        const handler = kind === 'request_body' ? exchange.requestBody : exchange.responseBody;
        const result = handler
          ? await handler.call(exchange, bodyBytes(body.body), body.end_of_stream === true)
          : { action: 'continue' as const };
        return phaseResponse(kind, result);
      }
      case 'request_trailers':
      case 'response_trailers': {
        const trailers = headerFieldsFromMap((message[kind] as HttpTrailers).trailers);
        const handler = kind === 'request_trailers' ? exchange.requestTrailers : exchange.responseTrailers;
        const result: TrailersResult = handler ? await handler.call(exchange, trailers) : {};
        const mutation = headerMutation(result.headers ?? [], result.removeHeaders ?? []);
        return { [kind]: mutation ? { header_mutation: mutation } : {} };
      }
    }
  }
}

/** A decoded message reads an absent `bytes` field as an empty array, not a Buffer. */
function bodyBytes(bytes: Buffer | Uint8Array | null | undefined): Buffer {
  if (Buffer.isBuffer(bytes)) return bytes;
  return bytes && bytes.length > 0 ? Buffer.from(bytes) : Buffer.alloc(0);
}

function head(headers: HttpHeaders | undefined, message: ProcessingRequest) {
  return {
    headers: headerFieldsFromMap(headers?.headers),
    endOfStream: headers?.end_of_stream === true,
    attributes: attributeValues(message.attributes),
  };
}

function headersResponse(
  kind: 'request_headers' | 'response_headers',
  result: PhaseResult,
): ProcessingResponse {
  const response = phaseResponse(kind, result);
  if (result.action !== 'continue' || !result.next) return response;
  response.mode_override = modeOverride(result.next);
  if (
    kind === 'request_headers' &&
    response.mode_override.response_header_mode === 'SEND' &&
    onlyOnFailure(result.next)
  )
    response.dynamic_metadata = responsePhaseOnlyOnFailure;
  return response;
}

/** The response headers are wanted for a failed backend's answer only (see PhaseRequests). */
function onlyOnFailure(next: PhaseRequests): boolean {
  return next.responseHeadersOnFailure === true && !next.responseHeaders && !next.responseBody;
}

/** What tells the gateway's Envoy to skip the response phase unless the answer is a failure (http-filters.ts). */
const responsePhaseOnlyOnFailure: Struct = {
  fields: {
    [responsePhaseMetadata.namespace]: {
      structValue: {
        fields: { [responsePhaseMetadata.key]: { stringValue: responsePhaseMetadata.onlyOnFailure } },
      },
    },
  },
};

function phaseResponse(kind: RequestKind, result: PhaseResult): ProcessingResponse {
  if (result.action === 'respond') {
    const body = typeof result.body === 'string' ? Buffer.from(result.body) : result.body;
    return {
      immediate_response: {
        status: { code: result.status },
        ...(result.headers?.length ? { headers: headerMutation(result.headers) } : {}),
        ...(body ? { body } : {}),
        ...(result.details ? { details: result.details } : {}),
      },
    };
  }
  const common: CommonResponse = {};
  const mutation = headerMutation(result.headers ?? [], result.removeHeaders ?? []);
  if (mutation) common.header_mutation = mutation;
  if (result.body) {
    common.body_mutation = { body: result.body };
    // In a headers answer Envoy applies a body only with CONTINUE_AND_REPLACE (e.g. set-body on a bodiless GET).
    if (kind === 'request_headers' || kind === 'response_headers') common.status = 'CONTINUE_AND_REPLACE';
  }
  // Envoy ignores clear_route_cache without a header mutation (and counts it), so only send it with one.
  if (result.clearRouteCache && mutation) common.clear_route_cache = true;
  return { [kind]: { response: common } };
}

/**
 * A body that arrives while the headers are with the engine is held under flow control, and once that is over the
 * buffer limit Envoy 1.40 in BUFFERED mode neither refuses it (413) nor reads on: the request hangs until the idle
 * timeout. A declared length over the limit is refused by the engine at the headers, so BUFFERED is safe then.
 * An undeclared length gets BUFFERED_PARTIAL, which hands the engine at most the buffer limit, marked not
 * end-of-stream when the body is longer, and the engine refuses it.
 */
function requestBodyMode(next: PhaseRequests): ProcessingMode['request_body_mode'] {
  if (!next.requestBody) return 'NONE';
  return next.requestBodyLengthUnknown ? 'BUFFERED_PARTIAL' : 'BUFFERED';
}

/** Header modes left DEFAULT mean "no change" (Envoy ≥ 1.34); body modes are always stated. */
function modeOverride(next: PhaseRequests): ProcessingMode {
  return {
    response_header_mode:
      next.responseHeaders || next.responseHeadersOnFailure || next.responseBody ? 'SEND' : 'SKIP',
    request_body_mode: requestBodyMode(next),
    response_body_mode: next.responseBodyStreamed ? 'STREAMED' : next.responseBody ? 'BUFFERED' : 'NONE',
  };
}
