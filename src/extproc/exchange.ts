import type { AttributeValue, HeaderChange, HeaderFields } from './headers.js';

/**
 * What the engine does with one HTTP exchange, phase by phase, in terms that hide the protobuf messages. The stream
 * state machine (stream.ts) calls these in protocol order and turns each result into the matching
 * ProcessingResponse. A phase the exchange did not ask for is never called.
 */
export interface Exchange {
  requestHeaders(head: MessageHead): PhaseResult | Promise<PhaseResult>;
  requestBody?(body: Buffer, endOfStream: boolean): PhaseResult | Promise<PhaseResult>;
  requestTrailers?(trailers: HeaderFields): TrailersResult | Promise<TrailersResult>;
  responseHeaders?(head: MessageHead): PhaseResult | Promise<PhaseResult>;
  responseBody?(body: Buffer, endOfStream: boolean): PhaseResult | Promise<PhaseResult>;
  responseTrailers?(trailers: HeaderFields): TrailersResult | Promise<TrailersResult>;
  /**
   * The stream is over: release what the exchange holds. Envoy half-closes and resets the stream the same way
   * whether the HTTP exchange finished or the client went away, so this does not say which.
   */
  end?(): void;
}

/**
 * Makes the exchange of one gRPC stream; `stream` says what the stream's own headers carried (Envoy's trace context
 * for the ext_proc call, when it traces).
 */
export type ExchangeFactory = (stream?: StreamContext) => Exchange;

/** What the gRPC stream's headers (not the HTTP request's) say about the exchange. */
export interface StreamContext {
  /** W3C trace context of Envoy's span for this ext_proc call: `traceparent`, `tracestate`. */
  readonly traceHeaders?: Readonly<Record<string, string>>;
  /** How long Envoy waits for the answer the exchange is computing; absent when nothing can change that. */
  readonly deadline?: PhaseDeadline;
}

/**
 * Envoy's wait for the answer to the message being handled (its `message_timeout`, 500 ms by default). Work that
 * may outlast it (a policy's call to another service, a retry's pauses) asks for more first: the stream sends
 * `override_message_timeout`, which restarts Envoy's timer. Envoy honours one such message per phase and only up
 * to its `max_message_timeout`, so what a later ask gets is what is left of the first one's grant.
 */
export interface PhaseDeadline {
  /**
   * Asks Envoy to wait `ms` from now for the pending answer. Returns how long from now it will wait: `ms` (or
   * more) when granted or already covered, less when this phase's one extension was spent on a shorter wait,
   * `Infinity` when no phase is pending or Envoy ignores answers (observability mode).
   */
  extend(ms: number): number;
}

export interface MessageHead {
  readonly headers: HeaderFields;
  readonly endOfStream: boolean;
  /** Attributes Envoy sent with the first message of this direction (e.g. `source.address`). */
  readonly attributes: ReadonlyMap<string, AttributeValue>;
}

/** Which later phases this exchange needs; sent to Envoy as `mode_override` from a headers phase. */
export interface PhaseRequests {
  readonly requestBody?: boolean;
  /**
   * The request body's length is not declared (chunked, or HTTP/2 without content-length): Envoy is asked for at
   * most its buffer limit, marked not end-of-stream when the body is longer, instead of the whole body.
   */
  readonly requestBodyLengthUnknown?: boolean;
  readonly responseHeaders?: boolean;
  /**
   * The response headers only when Envoy answered for the backend (unreachable, timed out) or the backend answered
   * 5xx: what on-error needs. Where Envoy honours it (the gateway's own bootstrap, http-filters.ts) every other
   * answer skips the phase; elsewhere it is asked for like `responseHeaders`.
   */
  readonly responseHeadersOnFailure?: boolean;
  readonly responseBody?: boolean;
  /**
   * The response body chunk by chunk as it arrives (STREAMED), each passed on once answered, instead of whole:
   * for a body the exchange only watches (a server-sent-event stream must not be held back).
   */
  readonly responseBodyStreamed?: boolean;
}

export type PhaseResult = ContinueResult | RespondResult;

export interface ContinueResult {
  readonly action: 'continue';
  readonly headers?: readonly HeaderChange[];
  readonly removeHeaders?: readonly string[];
  /** Replaces the message body (only honoured in a body phase, or a headers phase that asked for no body). */
  readonly body?: Buffer;
  /** Re-select the route after header changes (`:path`, the backend-selection header). */
  readonly clearRouteCache?: boolean;
  readonly next?: PhaseRequests;
}

/** End the exchange now with this response; nothing reaches (or comes back from) the backend. */
export interface RespondResult {
  readonly action: 'respond';
  readonly status: number;
  readonly headers?: readonly HeaderChange[];
  readonly body?: Buffer | string;
  /** Goes to Envoy's %RESPONSE_CODE_DETAILS%; never shown to the client. */
  readonly details?: string;
}

export interface TrailersResult {
  readonly headers?: readonly HeaderChange[];
  readonly removeHeaders?: readonly string[];
}

export const continueUnchanged: ContinueResult = Object.freeze({ action: 'continue' });
