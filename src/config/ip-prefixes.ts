/**
 * IP addresses and address prefixes as the `network` section writes them (`10.0.1.0/24`, `2001:db8::/32`, a bare
 * address): parsed strictly, compared by containment. The schema, the rules and the placement checks share them.
 */

import ipaddr from 'ipaddr.js';

export function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  // Strict forms only: ipaddr.isValid also accepts legacy shorthands such as "10.1".
  if (!ipaddr.IPv4.isValidFourPartDecimal(text) && !ipaddr.IPv6.isValid(text)) return undefined;
  return ipaddr.process(text);
}

/** An address prefix in canonical form, e.g. `10.0.1.0/24`; a bare address is its own /32 (or /128). */
export interface Prefix {
  readonly address: ipaddr.IPv4 | ipaddr.IPv6;
  readonly length: number;
}

export function parsePrefix(text: string): Prefix | undefined {
  const [base, bits, extra] = text.split('/');
  if (extra !== undefined || base === undefined) return undefined;
  const address = parseAddress(base);
  if (!address) return undefined;
  const max = address.kind() === 'ipv4' ? 32 : 128;
  if (bits === undefined) return { address, length: max };
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return undefined;
  return { address, length: Number(bits) };
}

export function formatPrefix(prefix: Prefix): string {
  return `${networkOf(prefix).toString()}/${prefix.length}`;
}

function networkOf(prefix: Prefix): ipaddr.IPv4 | ipaddr.IPv6 {
  const bytes = prefix.address.toByteArray();
  const masked = bytes.map((byte, index) => {
    const keep = Math.max(0, Math.min(8, prefix.length - index * 8));
    return byte & ((0xff << (8 - keep)) & 0xff);
  });
  return ipaddr.fromByteArray(masked);
}

/** True when every address of `inner` is in `outer`. */
export function prefixContains(outer: Prefix, inner: Prefix): boolean {
  if (outer.address.kind() !== inner.address.kind() || inner.length < outer.length) return false;
  return inner.address.match([outer.address, outer.length] as never);
}

export function prefixesOverlap(a: Prefix, b: Prefix): boolean {
  return prefixContains(a, b) || prefixContains(b, a);
}
