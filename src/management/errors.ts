/**
 * Errors of the management API, answered in API Management's shape:
 * `{ "error": { "code": "ValidationError", "message": "…", "details": [{ "code": "…", "message": "…" }] } }`.
 * Codes are stable; a message says what was wrong and where, never a secret.
 */
export type ManagementErrorCode =
  | 'Unauthorized'
  | 'Forbidden'
  | 'TooManyRequests'
  | 'ResourceNotFound'
  | 'MethodNotAllowed'
  | 'UnsupportedMediaType'
  | 'PayloadTooLarge'
  | 'ValidationError'
  | 'Conflict'
  | 'PreconditionFailed'
  | 'ServiceUnavailable'
  | 'InvalidConfiguration'
  | 'InternalError';

export class ManagementError extends Error {
  override readonly name = 'ManagementError';
  constructor(
    readonly status: number,
    readonly code: ManagementErrorCode,
    message: string,
    /** One line per problem, e.g. `request body:3:14: serviceUrl: must be an http:// or https:// URL`. */
    readonly details: readonly string[] = [],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }

  body() {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details.length > 0
          ? { details: this.details.map((message) => ({ code: this.code, message })) }
          : {}),
      },
    };
  }
}

export const notFound = (what: string) => new ManagementError(404, 'ResourceNotFound', `${what} not found`);
