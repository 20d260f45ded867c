import ipaddr from 'ipaddr.js';

/**
 * Which addresses a client metadata document may be fetched from. Only public unicast addresses: never loopback,
 * private (RFC 1918, unique-local), link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, multicast,
 * reserved, or an IPv6 form that embeds an IPv4 address (mapped, NAT64, 6to4, Teredo), unless a development
 * configuration lists the network in `allowedNetworks`.
 */
export class AddressPolicy {
  private readonly allowed: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];

  /** `allowedNetworks`: CIDR ranges (`127.0.0.1/32`, `fd00::/8`) allowed although not public. */
  constructor(allowedNetworks: readonly string[] = []) {
    this.allowed = allowedNetworks.map((cidr) => ipaddr.parseCIDR(cidr));
  }

  /** The index of the first entry that is not a CIDR range, or -1. */
  static firstInvalid(networks: readonly unknown[]): number {
    return networks.findIndex((cidr) => {
      try {
        ipaddr.parseCIDR(String(cidr));
        return typeof cidr !== 'string';
      } catch {
        return true;
      }
    });
  }

  /** Whether a connection to `address` (an IP literal, v4 or v6) may be made; anything that does not parse is not. */
  permits(address: string): boolean {
    let parsed: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      // process(): an IPv4-mapped IPv6 address is judged as the IPv4 address it is.
      parsed = ipaddr.process(address);
    } catch {
      return false;
    }
    if (
      this.allowed.some(([network, bits]) => network.kind() === parsed.kind() && parsed.match(network, bits))
    )
      return true;
    return parsed.range() === 'unicast';
  }
}
