import type { Context } from 'koa';
import { peerAddress } from '../auth/index.js';
import { clientAddressFrom, clientAddressHeader } from '../envoy/contract.js';

/**
 * The client's address for the service's abuse limits and security log: the one Envoy determined (the TCP peer,
 * or what the trusted proxies of `gateway.trustedProxyHops` reported) and put in its own header, which it
 * overwrites on every request it routes here.
 */
export function clientAddress(ctx: Context): string {
  return clientAddressFrom(ctx.get(clientAddressHeader), peerAddress(ctx));
}
