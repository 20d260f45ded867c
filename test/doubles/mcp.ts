import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWK, jwtVerify, SignJWT } from 'jose';
import Koa from 'koa';
import type {
  AccessTokenClaims,
  AccessTokenVerifier,
  GatewayCaller,
  GatewayResponse,
  Subject,
  ToolCallRequest,
  ToolCatalog,
  ToolOperation,
} from '../../src/mcp/index.js';
import { createMcpEndpoint, type McpEndpoint, type McpEndpointOptions } from '../../src/mcp/index.js';

export const ISSUER = 'https://auth.example.test';

/** The spec's Course API in product "courses", plus an admin API in product "admin". */
export function sampleOperations(): ToolOperation[] {
  const course = { apiId: 'course-api', apiName: 'Course API', productIds: ['courses'] };
  const none = { templateParameters: [], queryParameters: [], headerParameters: [] };
  return [
    {
      ...course,
      ...none,
      operationId: 'listCourses',
      method: 'GET',
      urlTemplate: '/api/Course',
      summary: 'List courses',
      queryParameters: [
        { name: 'courseID', required: false, schema: { type: 'integer' }, description: 'Filter' },
      ],
    },
    {
      ...course,
      ...none,
      operationId: 'getCourse',
      method: 'GET',
      urlTemplate: '/api/Course/{id}',
      summary: 'Get one course',
      templateParameters: [{ name: 'id', required: true, schema: { type: 'integer' } }],
      headerParameters: [{ name: 'Customer-Key', required: false }],
    },
    {
      ...course,
      ...none,
      operationId: 'createCourse',
      method: 'POST',
      urlTemplate: '/api/Course',
      summary: 'Create a course',
      requestBodySchema: {
        type: 'object',
        properties: { name: { type: 'string' }, credits: { type: 'integer' } },
        required: ['name'],
      },
      requestBodyRequired: true,
    },
    {
      apiId: 'admin-api',
      apiName: 'Admin API',
      productIds: ['admin'],
      ...none,
      method: 'DELETE',
      urlTemplate: '/api/Admin/{id}',
      templateParameters: [{ name: 'id', required: true }],
    },
  ];
}

export class MutableCatalog implements ToolCatalog {
  readonly #listeners = new Set<() => void>();
  constructor(private ops: ToolOperation[]) {}
  operations(): readonly ToolOperation[] {
    return this.ops;
  }
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  set(ops: ToolOperation[]): void {
    this.ops = ops;
    for (const l of this.#listeners) l();
  }
}

export interface RecordedCall {
  op: ToolOperation;
  request: ToolCallRequest;
  subject: Subject;
}

export class FakeCaller implements GatewayCaller {
  readonly calls: RecordedCall[] = [];
  response: GatewayResponse | Error = json(200, { id: 1, name: 'Algebra' });
  async call(op: ToolOperation, request: ToolCallRequest, subject: Subject): Promise<GatewayResponse> {
    this.calls.push({ op, request, subject });
    if (this.response instanceof Error) throw this.response;
    return this.response;
  }
}

export function json(status: number, value: unknown): GatewayResponse {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(value)),
    contentType: 'application/json',
  };
}

/** A real ES256 signer and a jose verifier over a local JWKS, as the authorization server will provide. */
export interface TokenKit {
  readonly verifier: AccessTokenVerifier;
  readonly revoked: Set<string>;
  readonly jwks: { keys: JWK[] };
  sign(
    claims: Record<string, unknown>,
    options?: { expiresIn?: string | number; issuer?: string; key?: 'other' },
  ): Promise<string>;
}

export async function createTokenKit(): Promise<TokenKit> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const other = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const jwks = { keys: [jwk] };
  const keySet = createLocalJWKSet(jwks);
  const revoked = new Set<string>();
  let n = 0;
  const verifier: AccessTokenVerifier = {
    async verifyAccessToken(token, expected): Promise<AccessTokenClaims> {
      const { payload } = await jwtVerify(token, keySet, {
        issuer: ISSUER,
        audience: expected.audience,
        typ: 'at+jwt',
        requiredClaims: ['exp', 'sub', 'jti'],
      });
      if (revoked.has(payload.jti!)) throw new Error('token revoked');
      return payload as AccessTokenClaims;
    },
  };
  return {
    verifier,
    revoked,
    jwks,
    async sign(claims, options = {}) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'k1' })
        .setIssuer(options.issuer ?? ISSUER)
        .setIssuedAt()
        .setJti(`jti-${++n}`)
        .setExpirationTime(options.expiresIn ?? '5m')
        .sign(options.key === 'other' ? other.privateKey : privateKey);
    },
  };
}

export interface RunningApp {
  readonly base: string;
  readonly url: string;
  readonly endpoint: McpEndpoint;
  close(): Promise<void>;
}

/**
 * Starts a Koa app with the endpoint on a loopback port. The resource URL must name the port clients use, so
 * the server is started first and the endpoint built for its address.
 */
export async function startApp(
  build: (resourceUrl: string) => Omit<McpEndpointOptions, 'resourceUrl'>,
  path = '/v1/mcp',
): Promise<RunningApp> {
  const app = new Koa();
  let endpoint: McpEndpoint | undefined;
  app.use((ctx, next) => endpoint!.middleware(ctx, next));
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = 'not here';
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const url = `${base}${path}`;
  endpoint = createMcpEndpoint({ resourceUrl: url, ...build(url) });
  return {
    base,
    url,
    endpoint,
    async close() {
      endpoint!.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface PostOptions {
  token?: string;
  session?: string;
  version?: string;
  accept?: string | null;
  contentType?: string;
  headers?: Record<string, string>;
  method?: string;
}

/** Raw HTTP to the endpoint, so statuses, headers and bodies can be asserted exactly. */
export async function send(url: string, body: unknown, o: PostOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.accept !== null) headers.accept = o.accept ?? 'application/json, text/event-stream';
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.session) headers['mcp-session-id'] = o.session;
  if (o.version) headers['mcp-protocol-version'] = o.version;
  const method = o.method ?? 'POST';
  if (method === 'POST') headers['content-type'] = o.contentType ?? 'application/json';
  return fetch(url, {
    method,
    headers,
    body: method === 'POST' ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined,
  });
}

export function initializeMessage(protocolVersion = '2025-11-25', id: number | string = 1) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
}

/** Initializes a session at `revision` and sends `notifications/initialized`; returns the session id. */
export async function openSession(url: string, token: string, revision = '2025-11-25'): Promise<string> {
  const res = await send(url, initializeMessage(revision), { token });
  if (res.status !== 200) throw new Error(`initialize: ${res.status} ${await res.text()}`);
  const session = res.headers.get('mcp-session-id')!;
  await res.arrayBuffer();
  const ack = await send(
    url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { token, session, version: revision },
  );
  if (ack.status !== 202) throw new Error(`initialized: ${ack.status}`);
  return session;
}

/** Parses a complete SSE body into its `message` events' JSON payloads. */
export function sseMessages(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((block) => block.includes('event: message'))
    .map((block) =>
      JSON.parse(
        block
          .split('\n')
          .find((l) => l.startsWith('data: '))!
          .slice(6),
      ),
    );
}

/** Reads a streamed body as text, a chunk at a time, for SSE streams that stay open. */
export function textOf(response: Response) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  return {
    /** Reads until the text so far matches `pattern`, then returns all of it. */
    async until(pattern: RegExp): Promise<string> {
      for (let chunks = 0; !pattern.test(text); chunks++) {
        if (chunks > 100) throw new Error(`no ${pattern} in ${JSON.stringify(text)}`);
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${pattern}: ${JSON.stringify(text)}`);
        text += value;
      }
      return text;
    },
    cancel: () => reader.cancel(),
  };
}
