import { isIP } from 'node:net';

/**
 * Names both Envoy's bootstrap and the processes behind it rely on. A name here is written once: the bootstrap sets
 * or routes on it, the engine, the service and the management API read it.
 */

/** Every header with this prefix is Portcullis-internal: clients' copies are stripped before any policy runs. */
export const internalHeaderPrefix = 'x-portcullis-';

/**
 * The client's address as Envoy determined it (the TCP peer, or the entry `trustedProxyHops` trusted proxies put in
 * X-Forwarded-For), set by Envoy on every request it routes to the Koa service or the management API, replacing any
 * copy a client sent. Their abuse limits key on it: X-Forwarded-For itself starts with whatever the client wrote.
 */
export const clientAddressHeader = `${internalHeaderPrefix}client-address`;

/**
 * The request header that switches the engine's debug trace on for one request (with the configured key): a request
 * carrying it always goes through the engine, even on a route that otherwise skips it (bootstrap/engine-bypass.ts).
 */
export const traceRequestHeader = `${internalHeaderPrefix}trace`;

/**
 * The client's address as the service and the management API key their abuse limits and logs on: what Envoy put in
 * `clientAddressHeader` (`fromEnvoy`), else — a caller that reached their loopback port directly — the TCP peer.
 * Never X-Forwarded-For's first entry: a client writes that one itself.
 */
export function clientAddressFrom(fromEnvoy: string | undefined, peer: string): string {
  const address = fromEnvoy?.trim() ?? '';
  return isIP(address) !== 0 ? address : peer;
}

/** The route action that sets `clientAddressHeader` (Envoy's own view of the client, overwriting a client's copy). */
export const setClientAddress = [
  {
    header: { key: clientAddressHeader, value: '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%' },
    append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
  },
] as const;

export const engineClusterName = 'portcullis_engine';
export const serviceClusterName = 'portcullis_service';

/** An API's cluster (its `serviceUrl`). */
export function apiClusterName(apiId: string): string {
  return `api_${apiId}`;
}

/** A named backend's cluster (what `set-backend-service backend-id` picks). */
export function backendClusterName(backendId: string): string {
  return `backend_${backendId}`;
}

/** The dynamic forward proxy clusters, for a base URL a policy computed at request time. */
export function dynamicClusterName(tls: boolean): string {
  return tls ? 'dynamic_https' : 'dynamic_http';
}

/**
 * The header the engine sets to pick the backend cluster for a request (its value is a cluster name). Envoy
 * removes it before forwarding; the engine strips any copy a client sent.
 */
export const backendSelectionHeader = `${internalHeaderPrefix}backend`;

/**
 * The router's per-request timeout header: the engine sets it from forward-request's timeout. The ext_proc mutation
 * rules let the engine set this one Envoy header and no other.
 */
export const upstreamTimeoutHeader = 'x-envoy-upstream-rq-timeout-ms';

/**
 * The ext_proc attributes Envoy sends with the request headers and the engine reads: the client's address, and the
 * client certificate from the TLS connection itself (never from a header) — `connection.mtls` and the URL-encoded
 * PEM of the peer certificate, absent on plain connections.
 */
export const requestAttributes = {
  sourceAddress: 'source.address',
  mtls: 'connection.mtls',
  peerCertificate: 'connection.peer_certificate',
} as const;

/** Sent with the response headers: tells a backend's own answer (`via_upstream`) from Envoy's local reply. */
export const responseAttributes = { codeDetails: 'response.code_details' } as const;

/**
 * The dynamic metadata the engine's answer to the request headers sets when it wants the response headers only if
 * the backend failed (an on-error section is the one reason): the gateway's ext_proc filter is then skipped on the
 * response path for any answer below 500 (http-filters.ts), which saves a message each way per request.
 */
export const responsePhaseMetadata = {
  namespace: 'portcullis.response',
  key: 'phase',
  onlyOnFailure: 'only-on-failure',
} as const;

/**
 * Sent by the ext_proc filter of an Envoy Portcullis did not configure (`envoy-config --snippet`): the name of the
 * route the request took, by which an operator names the API of a route (`apiRouteNamePrefix`).
 */
export const routeAttributes = { routeName: 'xds.route_name' } as const;

/**
 * A route named `portcullis:<api id>` carries that API's requests, whatever their host: the operator of an Envoy
 * Portcullis did not configure says so in the route's `name`. Any other route name leaves the choice to the host
 * and URL suffix, as in Portcullis's own Envoy.
 */
export const apiRouteNamePrefix = 'portcullis:';

/**
 * The longest Envoy waits for one engine answer once the engine asks for more (ext_proc's `max_message_timeout`,
 * which bounds `override_message_timeout`), and so the longest a policy's slow work may keep one phase waiting. A
 * phase cannot usefully last longer than the stream idle timeout, the longest timeout the configuration allows:
 * nothing moves on the client's stream while the engine works, so Envoy ends the request then anyway.
 */
export function maxMessageTimeoutMs(limits: { readonly streamIdleTimeoutMs: number }): number {
  return limits.streamIdleTimeoutMs;
}
