/**
 * The access rules of the `network` section as they are enforced: each rule's source (a service tag, an address or
 * a prefix) resolved to prefixes, the rules that apply to a port or a backend in evaluation order with the security
 * group's defaults after them, and what they decide for an address. The runtime plan hands them to Envoy
 * (envoy/bootstrap/rbac.ts) for each listener and sidecar; the placement checks (network-placement.ts) read them too.
 */

import { formatPrefix, type Prefix, parsePrefix, prefixContains } from './ip-prefixes.js';
import type { AccessRuleConfig, BackendRestrictionConfig, NetworkConfig } from './network-schema.js';

/** A rule's source resolved to prefixes: `negate` means "every address outside them" (the Internet tag). */
export type ResolvedSource =
  | { readonly kind: 'any' }
  | { readonly kind: 'prefixes'; readonly prefixes: readonly string[]; readonly negate: boolean };

export interface ResolvedRule {
  readonly name: string;
  readonly priority: number;
  readonly access: 'allow' | 'deny';
  readonly source: ResolvedSource;
}

type Placement = Pick<NetworkConfig, 'addressSpace' | 'subnets'>;

export function resolveSource(source: string, network: Placement): ResolvedSource {
  const space = network.addressSpace;
  switch (source) {
    case '*':
      return { kind: 'any' };
    case 'Internet':
      return { kind: 'prefixes', prefixes: [canonical(space!)], negate: true };
    case 'VirtualNetwork':
      return { kind: 'prefixes', prefixes: [canonical(space!)], negate: false };
    case 'GatewaySubnet':
      return { kind: 'prefixes', prefixes: [canonical(network.subnets!.gateway)], negate: false };
    case 'ResourceSubnet':
      return { kind: 'prefixes', prefixes: [canonical(network.subnets!.resources)], negate: false };
    default:
      return { kind: 'prefixes', prefixes: [canonical(source)], negate: false };
  }
}

function canonical(text: string): string {
  return formatPrefix(parsePrefix(text)!);
}

/** The security group's own rules, after the user's: the virtual network is allowed, everything else denied. */
function defaultRules(network: Placement): ResolvedRule[] {
  const defaults: ResolvedRule[] = [];
  if (network.addressSpace) {
    defaults.push({
      name: 'AllowVnetInBound',
      priority: 65000,
      access: 'allow',
      source: resolveSource('VirtualNetwork', network),
    });
  }
  defaults.push({ name: 'DenyAllInBound', priority: 65500, access: 'deny', source: { kind: 'any' } });
  return defaults;
}

/** The rules that apply to one port of the gateway, in the order they are evaluated (defaults last). */
export function inboundRulesFor(network: NetworkConfig, listenerPort: number): ResolvedRule[] {
  return [
    ...sortRules(
      network.inbound
        .filter((rule) => rule.port === '*' || rule.port === listenerPort)
        .map((rule) => resolveRule(rule, network)),
    ),
    ...defaultRules(network),
  ];
}

/**
 * A sidecar's rules in evaluation order. The spec's pair ends with an explicit deny; rules that do not end so are
 * completed by the security group's defaults.
 */
export function backendRulesFor(network: NetworkConfig, backend: BackendRestrictionConfig): ResolvedRule[] {
  return [...sortRules(backend.rules.map((rule) => resolveRule(rule, network))), ...defaultRules(network)];
}

function resolveRule(rule: AccessRuleConfig, network: Placement): ResolvedRule {
  return {
    name: rule.name,
    priority: rule.priority,
    access: rule.access,
    source: resolveSource(rule.source, network),
  };
}

function sortRules(rules: ResolvedRule[]): ResolvedRule[] {
  return [...rules].sort((a, b) => a.priority - b.priority);
}

/** What the rules decide for one source address: the first matching rule, or undefined when none matches. */
export function decide(rules: readonly ResolvedRule[], address: string): ResolvedRule | undefined {
  const target = parsePrefix(address);
  if (!target) throw new TypeError(`decide: "${address}" is not an address`);
  return rules.find((rule) => sourceMatches(rule.source, target));
}

function sourceMatches(source: ResolvedSource, target: Prefix): boolean {
  if (source.kind === 'any') return true;
  const inside = source.prefixes.some((text) => prefixContains(parsePrefix(text)!, target));
  return source.negate ? !inside : inside;
}
