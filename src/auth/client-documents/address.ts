import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** An IPv4 address from two 16-bit groups of an IPv6 address. */
function ipv4(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * An IPv6 form whose packets end up at an IPv4 address. `carried` gives every IPv4 address the form reaches, or
 * `undefined` when where it sits cannot be known from the address alone.
 */
interface Embedding {
  network: [ipaddr.IPv6, number];
  carried: (parts: readonly number[]) => ipaddr.IPv4[] | undefined;
}

const embedding = (
  cidr: string,
  carried: (parts: readonly number[]) => ipaddr.IPv4[] | undefined,
): Embedding => ({ network: ipaddr.IPv6.parseCIDR(cidr), carried });

/**
 * Every IPv6 form that embeds an IPv4 address, judged by the IPv4 address(es) it reaches: a loopback or private IPv4
 * address must not become reachable by writing it in IPv6. A NAT64 network-specific prefix (an operator's own /96)
 * cannot be recognised from the address; a host on such a network relies on its NAT64 refusing private targets.
 */
const EMBEDDINGS: readonly Embedding[] = [
  // RFC 4291 §2.5.5.2 (::ffff:a.b.c.d).
  embedding('::ffff:0:0/96', (p) => [ipv4(p[6]!, p[7]!)]),
  // RFC 6145 / RFC 2765 (::ffff:0:a.b.c.d).
  embedding('::ffff:0:0:0/96', (p) => [ipv4(p[6]!, p[7]!)]),
  // RFC 4291 §2.5.5.1, deprecated (::a.b.c.d): Node connects to it as an IPv6 address, which ipaddr.js calls
  // unicast once a URL has normalised `[::127.0.0.1]` to `[::7f00:1]`.
  embedding('::/96', (p) => [ipv4(p[6]!, p[7]!)]),
  // RFC 6052 §2.1 well-known NAT64 prefix; the address is the last 32 bits.
  embedding('64:ff9b::/96', (p) => [ipv4(p[6]!, p[7]!)]),
  // RFC 8215 local-use NAT64 prefix: the operator picks a prefix length of /48 to /96, and with it where the IPv4
  // address sits (RFC 6052 §2.2), so none can be trusted to be it: refused unless listed in allowedNetworks.
  embedding('64:ff9b:1::/48', () => undefined),
  // RFC 3056: 2002:AABB:CCDD::/48 tunnels to a.b.c.d.
  embedding('2002::/16', (p) => [ipv4(p[1]!, p[2]!)]),
  // RFC 4380 §4: the Teredo server in bits 32–63, the client's public address bit-inverted in the last 32 bits.
  embedding('2001::/32', (p) => [ipv4(p[2]!, p[3]!), ipv4(~p[6]! & 0xffff, ~p[7]! & 0xffff)]),
];

/**
 * Which addresses a client metadata document may be fetched from. Only public unicast addresses: never loopback,
 * private (RFC 1918, unique-local), link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, multicast,
 * reserved, or an IPv6 form that embeds such an IPv4 address (compatible, mapped, translated, NAT64, 6to4, Teredo),
 * unless a development configuration lists the network in `allowedNetworks`.
 */
export class AddressPolicy {
  private readonly allowed: readonly [Address, number][];

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
    let parsed: Address;
    try {
      parsed = ipaddr.parse(address);
    } catch {
      return false;
    }
    if (this.listed(parsed)) return true;
    if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
    const v6 = parsed as ipaddr.IPv6;
    const form = EMBEDDINGS.find(({ network: [network, bits] }) => v6.match(network, bits));
    if (form === undefined) return v6.range() === 'unicast';
    const carried = form.carried(v6.parts);
    return carried?.every((v4) => this.listed(v4) || v4.range() === 'unicast') === true;
  }

  private listed(address: Address): boolean {
    return this.allowed.some(
      ([network, bits]) => network.kind() === address.kind() && address.match(network, bits),
    );
  }
}
