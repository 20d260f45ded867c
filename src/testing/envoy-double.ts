/**
 * Plays Envoy's part for one request, in-process: hands the policy exchange the request headers (and body when it
 * asks), applies the header and body mutations it answers with, "forwards" to the cluster it picked by asking a
 * stub instead of the network, and gives the exchange the backend's answer — the ext_proc phases in protocol
 * order, with the same attributes Envoy sends (client address, mutual TLS certificate, response code details).
 */
import {
  apiClusterName,
  backendClusterName,
  backendSelectionHeader,
  internalHeaderPrefix,
  requestAttributes,
  responseAttributes,
  upstreamTimeoutHeader,
} from '../envoy/contract.js';
import type { ExchangeFactory, PhaseRequests, PhaseResult } from '../extproc/exchange.js';
import type { AttributeValue, HeaderChange, HeaderFields } from '../extproc/headers.js';
import { stubBody } from './stubbed-services.js';
import type { ResponseStub } from './test-file.js';

export interface DoubleRequest {
  readonly method: string;
  /** Path and query as the client sends them. */
  readonly path: string;
  readonly authority: string;
  readonly scheme: 'http' | 'https';
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer | undefined;
  readonly clientAddress: string;
  /** PEM of the client certificate presented over mutual TLS. */
  readonly certificatePem?: string;
}

export interface DoubleResponse {
  readonly status: number;
  readonly headers: [string, string][];
  readonly body: Buffer;
}

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: [string, string][];
  readonly body: string;
}

export interface DoubleOutcome {
  readonly response: DoubleResponse;
  /** What the backend received; undefined when the request never reached it. */
  readonly backend: ReceivedRequest | undefined;
}

/** The origin behind each cluster the configuration declares (API service URLs, named backends). */
export function clusterOrigins(
  apis: readonly { id: string; serviceUrl: string }[],
  backends: ReadonlyMap<string, string>,
): Map<string, string> {
  const origins = new Map<string, string>();
  for (const api of apis) origins.set(apiClusterName(api.id), new URL(api.serviceUrl).origin);
  for (const [id, url] of backends) origins.set(backendClusterName(id), new URL(url).origin);
  return origins;
}

export async function playEnvoy(
  exchanges: ExchangeFactory,
  request: DoubleRequest,
  origins: ReadonlyMap<string, string>,
  answer: (method: string, url: string) => ResponseStub | undefined,
): Promise<DoubleOutcome> {
  const exchange = exchanges();
  try {
    const headers: HeaderFields = new Map([
      [':method', [request.method]],
      [':path', [request.path]],
      [':authority', [request.authority]],
      [':scheme', [request.scheme]],
    ]);
    for (const [name, value] of request.headers) add(headers, name.toLowerCase(), value);
    if (request.body !== undefined && !headers.has('content-length'))
      headers.set('content-length', [String(request.body.length)]);
    const attributes = new Map<string, AttributeValue>([
      [requestAttributes.sourceAddress, `${request.clientAddress}:40000`],
    ]);
    if (request.certificatePem !== undefined) {
      attributes.set(requestAttributes.mtls, true);
      attributes.set(requestAttributes.peerCertificate, encodeURIComponent(request.certificatePem));
    }
    const hasBody = request.body !== undefined && request.body.length > 0;
    let body = request.body ?? Buffer.alloc(0);
    const first = await exchange.requestHeaders({ headers, endOfStream: !hasBody, attributes });
    if (first.action === 'respond') return { response: immediate(first), backend: undefined };
    apply(headers, first);
    const phases: PhaseRequests = first.next ?? {};
    if (phases.requestBody && hasBody) {
      const second = await exchange.requestBody!(body, true);
      if (second.action === 'respond') return { response: immediate(second), backend: undefined };
      apply(headers, second);
      if (second.body) body = second.body;
    } else if (first.body) body = first.body;

    const received = forwarded(headers, body, origins);
    const stub = answer(received.method, received.url);
    const upstream = upstreamAnswer(stub);
    let response: DoubleResponse = {
      status: upstream.status,
      headers: upstream.headers,
      body: upstream.body,
    };
    // As the gateway's Envoy: an exchange that wants only failures' headers sees a 5xx or Envoy's own reply.
    const failed = upstream.status >= 500;
    if (!phases.responseHeaders && !(phases.responseHeadersOnFailure && failed))
      return { response, backend: received };
    const responseFields: HeaderFields = new Map([[':status', [String(upstream.status)]]]);
    for (const [name, value] of upstream.headers) add(responseFields, name.toLowerCase(), value);
    const responseAttributesSent = new Map<string, AttributeValue>([
      [responseAttributes.codeDetails, upstream.details],
    ]);
    const hasResponseBody = upstream.body.length > 0;
    let result = await exchange.responseHeaders!({
      headers: responseFields,
      endOfStream: !hasResponseBody,
      attributes: responseAttributesSent,
    });
    if (result.action === 'respond') return { response: immediate(result), backend: received };
    apply(responseFields, result);
    let responseBody = result.body ?? upstream.body;
    if (phases.responseBody && hasResponseBody) {
      result = await exchange.responseBody!(upstream.body, true);
      if (result.action === 'respond') return { response: immediate(result), backend: received };
      apply(responseFields, result);
      if (result.body) responseBody = result.body;
    }
    response = {
      status: Number(responseFields.get(':status')?.[0] ?? upstream.status),
      headers: plain(responseFields),
      body: responseBody,
    };
    return { response, backend: received };
  } finally {
    exchange.end?.();
  }
}

function add(fields: HeaderFields, name: string, value: string): void {
  const values = fields.get(name);
  if (values) values.push(value);
  else fields.set(name, [value]);
}

/** A header mutation applied as Envoy applies it: removals, then each change (appended or overwriting). */
function apply(fields: HeaderFields, result: Extract<PhaseResult, { action: 'continue' }>): void {
  for (const name of result.removeHeaders ?? []) fields.delete(name.toLowerCase());
  for (const change of result.headers ?? []) setHeader(fields, change);
}

function setHeader(fields: HeaderFields, change: HeaderChange): void {
  const name = change.name.toLowerCase();
  if (change.append) add(fields, name, change.value);
  else fields.set(name, [change.value]);
}

function plain(fields: HeaderFields): [string, string][] {
  return [...fields].flatMap(([name, values]) =>
    name.startsWith(':') ? [] : values.map((value): [string, string] => [name, value]),
  );
}

function immediate(result: Extract<PhaseResult, { action: 'respond' }>): DoubleResponse {
  const fields: HeaderFields = new Map();
  for (const change of result.headers ?? []) setHeader(fields, { ...change, append: true });
  const body = result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body);
  return { status: result.status, headers: plain(fields), body };
}

/** The request as the backend gets it: the route Envoy picked from the engine's routing header, internals removed. */
function forwarded(
  fields: HeaderFields,
  body: Buffer,
  origins: ReadonlyMap<string, string>,
): ReceivedRequest {
  const cluster = fields.get(backendSelectionHeader)?.[0] ?? '';
  const authority = fields.get(':authority')?.[0] ?? '';
  const origin =
    origins.get(cluster) ??
    (cluster.startsWith('dynamic_')
      ? `${cluster === 'dynamic_https' ? 'https' : 'http'}://${authority}`
      : `http://${authority}`);
  const headers = plain(fields).filter(
    ([name]) => !name.startsWith(internalHeaderPrefix) && name !== upstreamTimeoutHeader,
  );
  return {
    method: fields.get(':method')?.[0] ?? 'GET',
    url: `${origin}${fields.get(':path')?.[0] ?? '/'}`,
    headers,
    body: body.toString('utf8'),
  };
}

/** The backend's answer, or Envoy's own reply when it could not be reached (no stub: the connection fails). */
function upstreamAnswer(stub: ResponseStub | undefined): DoubleResponse & { details: string } {
  if (stub === undefined || stub.fail === 'connection')
    return {
      status: 503,
      headers: [['content-type', 'text/plain']],
      body: Buffer.from(
        'upstream connect error or disconnect/reset before headers. reset reason: connection failure',
      ),
      details: 'upstream_reset_before_response_started{connection_failure}',
    };
  if (stub.fail === 'timeout')
    return {
      status: 504,
      headers: [['content-type', 'text/plain']],
      body: Buffer.from('upstream request timeout'),
      details: 'upstream_response_timeout',
    };
  const { body, headers } = stubBody(stub);
  return {
    status: stub.status,
    headers: headers.map(([n, v]) => [n.toLowerCase(), v]),
    body,
    details: 'via_upstream',
  };
}
