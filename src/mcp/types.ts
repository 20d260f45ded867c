/**
 * The narrow views the MCP endpoint needs from the rest of Portcullis. `catalog/`, `auth/` and the service
 * composition satisfy these; the endpoint never imports their concrete types, so it can be tested alone.
 */

/** One parameter of an operation (template, query or header). `schema` is a JSON Schema for its value. */
export interface ToolParameter {
  readonly name: string;
  readonly required: boolean;
  readonly schema?: Readonly<Record<string, unknown>>;
  readonly description?: string;
}

/** One operation of one API that belongs to at least one product: it becomes one MCP tool. */
export interface ToolOperation {
  readonly apiId: string;
  readonly apiName: string;
  /** Products the API belongs to; `read:<product>-work` / `write:<product>-work` grant the tool. */
  readonly productIds: readonly string[];
  readonly operationId?: string;
  readonly method: string;
  /** The operation's URL template relative to the API, e.g. `/api/Course/{id}`. */
  readonly urlTemplate: string;
  readonly templateParameters: readonly ToolParameter[];
  readonly queryParameters: readonly ToolParameter[];
  readonly headerParameters: readonly ToolParameter[];
  readonly requestBodySchema?: Readonly<Record<string, unknown>>;
  readonly requestBodyRequired?: boolean;
  readonly summary?: string;
  readonly description?: string;
}

export interface ToolCatalog {
  operations(): readonly ToolOperation[];
  /** Calls `listener` after the operations changed; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}

/** Who is calling: taken from the verified access token, never from the request body. */
export interface Subject {
  readonly sub: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
}

/** The HTTP request a tool call turns into, with every argument placed where the operation declares it. */
export interface ToolCallRequest {
  /** `urlTemplate` with template parameters filled in (percent-encoded) and the query string appended. */
  readonly path: string;
  readonly templateParameters: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | readonly string[]>>;
  readonly headers: Readonly<Record<string, string>>;
  /** The JSON body argument, when the operation has one and the caller gave it. */
  readonly body?: unknown;
}

export interface GatewayResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly body: Buffer;
  readonly contentType?: string;
}

/**
 * Sends a tool call through the gateway (so the API's policies apply) with a credential of the MCP service
 * itself; the user's access token never reaches it.
 */
export interface GatewayCaller {
  call(op: ToolOperation, request: ToolCallRequest, subject: Subject): Promise<GatewayResponse>;
}

/**
 * Claims of a verified access token (RFC 9068 names). `scope` is space-separated; an array is accepted
 * too so a verifier that already split it fits.
 */
export interface AccessTokenClaims {
  readonly sub?: string;
  readonly client_id?: string;
  readonly scope?: string | readonly string[];
}

/**
 * Checks signature, issuer, expiry, revocation and that the token is audience-bound to `audience` (RFC 8707).
 * Rejects with an error for any token it does not accept; its `message` is not shown to clients.
 */
export interface AccessTokenVerifier {
  verifyAccessToken(token: string, expected: { audience: string }): Promise<AccessTokenClaims>;
}

export interface ServerInfo {
  readonly name: string;
  readonly version: string;
  readonly title?: string;
}
