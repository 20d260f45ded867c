/**
 * The management listener (port 3443, the spec's management port): Envoy's readiness and statistics, read-only,
 * from its admin listener; and, when the gateway has a management API, every other path to the process that
 * serves it (`up`), which checks the administrator's credential itself.
 */

import type { HttpConnectionManagerFilter, Route, RouterFilter } from '../config-types.js';
import { setClientAddress } from '../contract.js';
import type { Endpoint } from './plan.js';

/** Paths of Envoy's admin interface the management listener serves: readiness and statistics, nothing that changes. */
export const managementPaths = ['/ready', '/stats', '/stats/prometheus', '/server_info'] as const;

export const adminClusterName = 'portcullis_admin';
export const managementClusterName = 'portcullis_management';

/** The API Management answer for a URL that matches nothing. */
const notFoundBody = '{ "statusCode": 404, "message": "Resource not found" }';

/**
 * The HTTP connection manager of a management listener. `api`: where the management API is served (absent: only
 * the read-only admin paths answer, everything else is 404).
 */
export function managementConnectionManager(
  api: Endpoint | undefined,
  routerFilter: RouterFilter,
): HttpConnectionManagerFilter {
  return {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type':
        'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
      stat_prefix: 'management',
      codec_type: 'AUTO',
      use_remote_address: true,
      // The same one path for Envoy's routes and the management API as on the gateway listener (connection-manager.ts).
      normalize_path: true,
      merge_slashes: true,
      path_with_escaped_slashes_action: 'KEEP_UNCHANGED',
      forward_client_cert_details: 'SANITIZE',
      route_config: {
        name: 'management',
        virtual_hosts: [
          {
            name: 'management',
            domains: ['*'],
            routes: [
              ...managementPaths.map<Route>((path) => ({
                name: `management${path.replace(/[^A-Za-z0-9]+/g, '_')}`,
                match: { path, headers: [{ name: ':method', string_match: { exact: 'GET' } }] },
                route: { cluster: adminClusterName, timeout: '5s' },
              })),
              api
                ? {
                    name: 'management_api',
                    match: { prefix: '/' },
                    // A change waits for Envoy's hot restart and the engines' reload before it is answered.
                    route: { cluster: managementClusterName, timeout: '120s' },
                    // The sign-in limit keys on the address Envoy saw, never on a header a client wrote.
                    request_headers_to_add: setClientAddress,
                  }
                : {
                    name: 'management_not_found',
                    match: { prefix: '/' },
                    direct_response: { status: 404, body: { inline_string: notFoundBody } },
                  },
            ],
          },
        ],
      },
      http_filters: [routerFilter],
    },
  };
}
