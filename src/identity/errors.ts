/**
 * Why a token could not be obtained. The message names the source and what went wrong (an endpoint's status and
 * OAuth error code, a missing file); it never holds a token, a secret or an assertion, so it may be logged and put
 * into `context.LastError.Message`.
 */
export class IdentityError extends Error {
  override readonly name = 'IdentityError';
  constructor(
    /** Stable: `unknown-identity`, `endpoint-refused`, `endpoint-unreachable`, `bad-response`, `unavailable`. */
    readonly code: IdentityErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export type IdentityErrorCode =
  | 'unknown-identity'
  | 'endpoint-refused'
  | 'endpoint-unreachable'
  | 'bad-response'
  | 'unavailable';
