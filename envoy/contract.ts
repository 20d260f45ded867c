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

/** The route action that sets `clientAddressHeader` (Envoy's own view of the client, overwriting a client's copy). */
export const setClientAddress = [
  {
    header: { key: clientAddressHeader, value: '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%' },
    append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
  },
] as const;
