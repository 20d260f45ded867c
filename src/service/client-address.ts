import { isIP } from 'node:net';
import type { Context } from 'koa';
import { peerAddress } from '../auth/index.js';
import { clientAddressHeader } from '../envoy/contract.js';

/**
 * The client's address for the service's abuse limits and security log: the one Envoy determined (the TCP peer,
 * or what the trusted proxies of `gateway.trustedProxyHops` reported) and put in its own header, which it
 * overwrites on every request it routes here. Never X-Forwarded-For's first entry: a client writes that one
 * itself. Without the header (a caller that reached the service's loopback port directly), the TCP peer.
 */
export function clientAddress(ctx: Context): string {
  const fromEnvoy = ctx.get(clientAddressHeader).trim();
  return isIP(fromEnvoy) !== 0 ? fromEnvoy : peerAddress(ctx);
}
