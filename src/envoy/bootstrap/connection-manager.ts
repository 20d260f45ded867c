/**
 * The HTTP connection manager of the gateway listeners (http and https): how Envoy reads a request (paths,
 * client address, timeouts), what it answers itself when a backend fails, and the route configuration and HTTP
 * filters it hands the request to.
 */

import type { HttpConnectionManagerFilter, LocalReplyConfig } from '../config-types.js';
import { gatewayHttpFilters } from './http-filters.js';
import { type BootstrapPlan, type ListenerPlan, limitsOf } from './plan.js';
import { virtualHosts } from './routes.js';
import { connectionManagerTracing } from './tracing.js';
import { seconds } from './values.js';

export const hcmStatPrefix = 'ingress_http';

export function gatewayConnectionManager(
  plan: BootstrapPlan,
  listener: ListenerPlan,
): HttpConnectionManagerFilter {
  return {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type':
        'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
      stat_prefix: hcmStatPrefix,
      codec_type: 'AUTO',
      stream_idle_timeout: seconds(limitsOf(plan).streamIdleTimeoutMs),
      request_timeout: seconds(limitsOf(plan).requestTimeoutMs),
      // The engine assigns request ids (kept when the client sent one), so every log line agrees.
      generate_request_id: false,
      // Envoy's tracer would otherwise write its sampling decision into the id's version digit (4 → 9, a or b) after
      // the engine logged it, and the backend would get an id no log line carries. Sampling stays random_sampling's
      // (tracing.ts); only the "stable sampling by request id" that packing allows is given up.
      request_id_extension: {
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.request_id.uuid.v3.UuidRequestIdConfig',
          pack_trace_reason: false,
        },
      },
      // An edge gateway trusts the TCP peer, not a client-supplied X-Forwarded-For; behind trusted proxies, the
      // entry the nearest one appended (the client address the engine's source.address and the service see).
      use_remote_address: true,
      // One path for everyone (Envoy's edge best practices): dot-segments, `%2e` dots and `\` resolved, slashes
      // merged, before the engine matches the operation and before the router forwards, so the backend resolves
      // the path the policy was chosen for. The engine normalises the same way (src/catalog/request-path.ts).
      normalize_path: true,
      merge_slashes: true,
      // An encoded slash is data (RFC 3986): kept as the client wrote it, matched as part of its segment and
      // forwarded once-encoded. Unescaping would merge two different resources into one (a `{name}` holding "a/b");
      // the engine refuses the one dangerous use, a dot-segment behind an encoded slash (`..%2F`).
      path_with_escaped_slashes_action: 'KEEP_UNCHANGED',
      xff_num_trusted_hops: plan.trustedProxyHops ?? 0,
      // A client-sent X-Forwarded-Client-Cert is dropped: policies get the certificate from the TLS connection
      // itself (ext_proc attributes), never from a header a client could forge.
      forward_client_cert_details: 'SANITIZE',
      ...(listener.role === 'https'
        ? { scheme_header_transformation: { scheme_to_overwrite: 'https' } }
        : {}),
      route_config: { name: 'gateway', virtual_hosts: virtualHosts(plan) },
      local_reply_config: backendFailureReplies(),
      http_filters: gatewayHttpFilters(plan),
      ...(plan.tracing ? { tracing: connectionManagerTracing(plan.tracing) } : {}),
    },
  };
}

/**
 * Envoy's own answers when the backend cannot be reached or times out say why in plain text ("upstream connect
 * error … Connection refused"). Without an on-error section the client gets API Management's default error
 * instead: 502 / 504 with a JSON body that names no internals. The engine still sees the reason
 * (`response.code_details`) and runs on-error when the operation has one.
 */
function backendFailureReplies(): LocalReplyConfig {
  const reply = (flags: readonly string[], status: number): LocalReplyConfig['mappers'][number] => ({
    filter: { response_flag_filter: { flags } },
    status_code: status,
    body: { inline_string: JSON.stringify({ statusCode: status, message: 'Internal server error' }) },
    body_format_override: {
      text_format_source: { inline_string: '%LOCAL_REPLY_BODY%' },
      content_type: 'application/json; charset=utf-8',
    },
  });
  return {
    mappers: [
      // UF connection failure, UH no healthy host, URX retries exhausted, UR remote reset, UC connection closed.
      reply(['UF', 'UH', 'URX', 'UR', 'UC'], 502),
      // UT: the router's timeout (forward-request's).
      reply(['UT'], 504),
    ],
  };
}
