/** How the plan's values are written in Envoy's fields: addresses, durations, RE2 patterns. */

import type { Address, Duration } from '../config-types.js';
import type { Endpoint } from './plan.js';

export function socketAddress(endpoint: Endpoint): Address {
  return { socket_address: { address: endpoint.host, port_value: endpoint.port } };
}

export function seconds(milliseconds: number): Duration {
  return `${milliseconds / 1000}s`;
}

export function isIpLiteral(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');
}

export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
