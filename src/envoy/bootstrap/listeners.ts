/**
 * One Envoy listener per listening socket of the plan: its access rules (rbac.ts) first, then the HTTP connection
 * manager of its role (the gateway's, or the management listener's), on TLS where the role asks for it.
 */

import type { DownstreamTransportSocket, Listener, NetworkFilter } from '../config-types.js';
import { gatewayConnectionManager } from './connection-manager.js';
import { routerFilter } from './http-filters.js';
import { managementConnectionManager } from './management.js';
import { type BootstrapPlan, type ListenerPlan, limitsOf } from './plan.js';
import { rbacFilter } from './rbac.js';
import { downstreamTls } from './tls.js';
import { socketAddress } from './values.js';

export function buildListener(plan: BootstrapPlan, listener: ListenerPlan): Listener {
  const filters: NetworkFilter[] = [];
  if (listener.rules) filters.push(rbacFilter(`inbound_${listener.name}.`, listener.rules));
  filters.push(
    listener.role === 'management'
      ? managementConnectionManager(plan.management, routerFilter())
      : gatewayConnectionManager(plan, listener),
  );
  const transportSocket = listenerTls(plan, listener);
  return {
    name: listener.name,
    address: socketAddress(listener.address),
    per_connection_buffer_limit_bytes: limitsOf(plan).connectionBufferBytes,
    filter_chains: [{ filters, ...(transportSocket ? { transport_socket: transportSocket } : {}) }],
  };
}

function listenerTls(plan: BootstrapPlan, listener: ListenerPlan): DownstreamTransportSocket | undefined {
  if (listener.role === 'https') {
    if (!plan.tls) throw new TypeError(`listener ${listener.name} is https but the plan has no tls`);
    return downstreamTls(plan.tls);
  }
  if (listener.role === 'management' && plan.tls && plan.management) {
    // Administrators' credentials travel on it: TLS with the gateway's certificate whenever there is one (the
    // gateway's client-certificate settings are the APIs', not the administrators').
    return downstreamTls({ certificateFile: plan.tls.certificateFile, keyFile: plan.tls.keyFile });
  }
  return undefined;
}
