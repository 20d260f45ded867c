import { requestAttributes } from '../envoy/contract.js';
import type { ExchangeFactory, MessageHead, PhaseResult } from '../extproc/exchange.js';
import type { AttributeValue, HeaderChange, HeaderFields } from '../extproc/headers.js';
import { headerFieldsFromMap } from '../extproc/headers.js';
import type { AuthzHeaderValueOption, CheckRequest, CheckResponse, Peer } from './messages.js';

/** gRPC status codes ext_authz reads in CheckResponse.status: OK allows, anything else denies. */
const grpcOk = 0;
const grpcPermissionDenied = 7;

export interface CheckObserver {
  /** The exchange answered in a way ext_authz cannot carry (it needs a later phase), or threw; the client got a 500. */
  onRefusedExchange(reason: string): void;
}

/**
 * Answers one ext_authz Check with the same exchange the ext_proc stream drives: its request-headers phase is the
 * whole conversation. An answer that needs more (the request body, a body replacement) cannot be given here; that
 * is refused with a 500 rather than let through unchecked (the load-time check keeps such pipelines out).
 */
export async function answerCheck(
  request: CheckRequest,
  exchanges: ExchangeFactory,
  observer: CheckObserver,
): Promise<CheckResponse> {
  const exchange = exchanges();
  try {
    const result = await exchange.requestHeaders(checkHead(request));
    const unsupported = unsupportedResult(result);
    if (unsupported) {
      observer.onRefusedExchange(unsupported);
      return internalError;
    }
    return checkResponse(result);
  } catch (error) {
    observer.onRefusedExchange(
      `the request headers handler failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    return internalError;
  } finally {
    // Nothing more of this request reaches the engine: the exchange ends with its answer (access log, slots).
    exchange.end?.();
  }
}

/** The request as the exchange sees it on ext_proc: headers with their pseudo-headers, and the same attributes. */
export function checkHead(request: CheckRequest): MessageHead {
  const http = request.attributes?.request?.http ?? {};
  const headers: HeaderFields =
    http.header_map?.headers && http.header_map.headers.length > 0
      ? headerFieldsFromMap(http.header_map)
      : new Map(Object.entries(http.headers ?? {}).map(([name, value]) => [name.toLowerCase(), [value]]));
  const pseudo: [string, string | undefined][] = [
    [':method', http.method],
    [':path', http.path],
    [':authority', http.host],
    [':scheme', http.scheme],
  ];
  for (const [name, value] of pseudo) if (!headers.has(name) && value) headers.set(name, [value]);
  return { headers, endOfStream: false, attributes: peerAttributes(request.attributes?.source) };
}

/** `source.address` as ext_proc's attribute spells it ("ip:port", "[v6]:port"), and the client certificate. */
function peerAttributes(source: Peer | undefined): Map<string, AttributeValue> {
  const attributes = new Map<string, AttributeValue>();
  const socket = source?.address?.socket_address;
  if (socket?.address) {
    const host = socket.address.includes(':') ? `[${socket.address}]` : socket.address;
    attributes.set(requestAttributes.sourceAddress, `${host}:${socket.port_value ?? 0}`);
  }
  if (source?.certificate) {
    attributes.set(requestAttributes.mtls, true);
    attributes.set(requestAttributes.peerCertificate, source.certificate);
  }
  return attributes;
}

/** Why ext_authz cannot carry this answer, or undefined when it can. */
function unsupportedResult(result: PhaseResult): string | undefined {
  if (result.action === 'respond') return undefined;
  if (result.next?.requestBody) return 'the operation needs the request body, which ext_authz does not send';
  if (result.body) return 'the pipeline replaces the request body, which ext_authz cannot do';
  return undefined;
}

function checkResponse(result: PhaseResult): CheckResponse {
  if (result.action === 'respond') {
    const body = result.body === undefined ? '' : result.body.toString();
    return {
      status: { code: grpcPermissionDenied },
      denied_response: {
        status: { code: result.status },
        headers: headerOptions(result.headers ?? [], true),
        ...(body ? { body } : {}),
      },
    };
  }
  return {
    status: { code: grpcOk },
    ok_response: {
      headers: headerOptions(result.headers ?? [], false),
      headers_to_remove: [...(result.removeHeaders ?? [])],
    },
  };
}

/**
 * A change with `append` adds a value, one without replaces every value. In a denied response every change is its
 * own header line (the exchange marks them all `append`), so the first of a name replaces whatever Envoy's local
 * reply put there (content-type) and the rest add to it.
 */
function headerOptions(changes: readonly HeaderChange[], firstReplaces: boolean): AuthzHeaderValueOption[] {
  const seen = new Set<string>();
  return changes.map((change) => {
    const first = !seen.has(change.name);
    seen.add(change.name);
    const append = firstReplaces ? !first : change.append === true;
    return {
      header: { key: change.name, value: change.value },
      append_action: append ? 'APPEND_IF_EXISTS_OR_ADD' : 'OVERWRITE_IF_EXISTS_OR_ADD',
    };
  });
}

const internalError: CheckResponse = {
  status: { code: grpcPermissionDenied },
  denied_response: {
    status: { code: 500 },
    headers: [
      {
        header: { key: 'content-type', value: 'application/json' },
        append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
      },
    ],
    body: '{"statusCode":500,"message":"Internal server error"}',
  },
};
