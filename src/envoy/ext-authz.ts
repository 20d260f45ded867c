import { engineClusterName, upstreamTimeoutHeader } from './contract.js';

/**
 * The Envoy configuration of the engine's ext_authz variant (`portcullis engine --authz`), for an Envoy that may not
 * run ext_proc: the `envoy.filters.http.ext_authz` filter in place of ext_proc, pointed at the engine's cluster.
 * Plain JSON, as it is pasted into someone else's Envoy YAML.
 */

export const extAuthzFilterName = 'envoy.filters.http.ext_authz';

export interface ExtAuthzFilterOptions {
  /** The cluster of the engine (default `portcullis_engine`). */
  readonly cluster?: string;
  /** How long Envoy waits for the engine's answer (default 2000 ms). */
  readonly timeoutMs?: number;
}

export function extAuthzFilter(options: ExtAuthzFilterOptions = {}): Record<string, unknown> {
  return {
    name: extAuthzFilterName,
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
      grpc_service: {
        envoy_grpc: { cluster_name: options.cluster ?? engineClusterName },
        timeout: `${(options.timeoutMs ?? 2000) / 1000}s`,
      },
      transport_api_version: 'V3',
      // Fail closed: a request the engine could not see must not reach a backend unchecked.
      failure_mode_allow: false,
      status_on_error: { code: 'InternalServerError' },
      // Repeated headers as separate values, as ext_proc sends them, rather than joined by commas.
      encode_raw_headers: true,
      // The engine's answer may change :path, :authority or the backend-selection header: pick the route again.
      clear_route_cache: true,
      // The client certificate for validate-client-certificate and context.Request.Certificate (the engine reads it
      // as it reads ext_proc's `connection.peer_certificate` attribute).
      include_peer_certificate: true,
      // :method and :authority are routing headers (set-method, base URLs); forward-request's timeout is the one
      // Envoy header the engine sets. The same rules as the ext_proc filter's.
      decoder_header_mutation_rules: {
        allow_all_routing: true,
        allow_expression: { regex: `^${upstreamTimeoutHeader.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}$` },
        disallow_is_error: true,
      },
    },
  };
}

/** `typed_per_filter_config` that turns the ext_authz filter off on one route (the service's own routes). */
export const extAuthzDisabled = {
  '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute',
  disabled: true,
} as const;
