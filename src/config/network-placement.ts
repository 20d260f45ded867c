/**
 * Placement checks (made at start, and by `portcullis validate`): across the `network`, `tls` and `gateway`
 * sections, whether the rules open each gateway port to the sources its network mode needs, keep the management
 * port off the Internet, and name APIs and backends that exist.
 */

import { type Prefix, parsePrefix, prefixContains } from './ip-prefixes.js';
import { inboundRulesFor, type ResolvedRule, type ResolvedSource } from './network-rules.js';
import {
  type NetworkConfig,
  networkConfigSchema,
  type TlsConfig,
  tlsConfigSchema,
} from './network-schema.js';

/** The parts of the whole configuration the placement checks read. */
export interface PlacementInput {
  readonly gateway: { readonly http: { readonly port: number } };
  readonly network: NetworkConfig;
  readonly tls?: TlsConfig | undefined;
  readonly apis?: readonly { readonly id: string }[];
  readonly backends?: readonly { readonly id: string }[];
}

export interface PlacementIssue {
  readonly path: (string | number)[];
  readonly message: string;
}

/**
 * Which classes of source reach a port: `internet` (any address outside the address space) and `vnet` (the
 * address space). A rule decides for a class only when its source covers the whole class; narrower rules before
 * it (an administrator's prefix, say) open the port to part of the class only.
 */
function classDecision(
  rules: readonly ResolvedRule[],
  cls: 'internet' | 'vnet',
  space: Prefix | undefined,
): ResolvedRule | undefined {
  return rules.find((rule) => {
    const source = rule.source;
    if (source.kind === 'any') return true;
    const prefixes = source.prefixes.map((text) => parsePrefix(text)!);
    if (cls === 'internet') return source.negate || prefixes.some((prefix) => prefix.length === 0);
    return (
      !source.negate &&
      prefixes.some((prefix) => prefix.length === 0 || (space !== undefined && prefixContains(prefix, space)))
    );
  });
}

export function placementIssues(config: PlacementInput): PlacementIssue[] {
  const issues = referenceIssues(config);
  const network = config.network;
  if (network.mode === 'none') return issues;
  // The sections' own problems are reported already; the placement is only judged on sections that are whole.
  if (!networkConfigSchema.safeParse(network).success) return issues;
  if (config.tls !== undefined && !tlsConfigSchema.safeParse(config.tls).success) return issues;
  const space = network.addressSpace ? parsePrefix(network.addressSpace) : undefined;
  const ruleIndex = (rule: ResolvedRule | undefined) =>
    network.inbound.findIndex((r) => r.name === rule?.name);
  const where = (rule: ResolvedRule | undefined): (string | number)[] => {
    const index = ruleIndex(rule);
    return index >= 0 ? ['network', 'inbound', index] : ['network', 'inbound'];
  };
  const ports: { name: string; port: number; path: (string | number)[] }[] = [
    { name: 'HTTP', port: config.gateway.http.port, path: ['gateway', 'http', 'port'] },
  ];
  if (config.tls) ports.push({ name: 'HTTPS', port: config.tls.port, path: ['tls', 'port'] });
  const required = network.mode === 'external' ? 'internet' : 'vnet';
  for (const listener of ports) {
    const rules = inboundRulesFor(network, listener.port);
    const decision = classDecision(rules, required, space);
    if (decision?.access !== 'allow') {
      const source = required === 'internet' ? 'the Internet' : 'the virtual network';
      const userRule = decision !== undefined && ruleIndex(decision) >= 0;
      const because = userRule
        ? `rule "${decision.name}" (priority ${decision.priority}) denies it`
        : 'no rule allows it';
      issues.push({
        path: decision && ruleIndex(decision) >= 0 ? where(decision) : ['network', 'inbound'],
        message:
          `${network.mode} mode needs the ${listener.name} port ${listener.port} open to ${source}, but ${because}; ` +
          `add an allow rule with port ${listener.port} and source ${required === 'internet' ? 'Internet' : 'VirtualNetwork'}`,
      });
    }
  }
  const management = network.managementPort;
  const managementRules = inboundRulesFor(network, management);
  const publicDecision = classDecision(managementRules, 'internet', space);
  if (publicDecision?.access === 'allow') {
    issues.push({
      path: where(publicDecision),
      message:
        `rule "${publicDecision.name}" opens the management port ${management} to the Internet; ` +
        'allow it from VirtualNetwork or an administrator prefix instead',
    });
  }
  const reachable = managementRules.some(
    (rule, index) =>
      rule.access === 'allow' &&
      // Shadowed when an earlier rule of the same or a wider source already denied it.
      !managementRules
        .slice(0, index)
        .some((earlier) => earlier.access === 'deny' && covers(earlier.source, rule.source)),
  );
  if (!reachable) {
    issues.push({
      path: ['network', 'inbound'],
      message: `the management port ${management} is closed to every source; add an allow rule with port ${management}`,
    });
  }
  if (new Set(ports.map((p) => p.port)).size !== ports.length || ports.some((p) => p.port === management)) {
    issues.push({
      path: ['network', 'managementPort'],
      message: `the gateway ports must differ (HTTP ${ports.map((p) => p.port).join(', HTTPS ')}, management ${management})`,
    });
  }
  return issues;
}

/** Sidecars and backend certificates name an API or a named backend that must exist. */
function referenceIssues(config: PlacementInput): PlacementIssue[] {
  const known = new Set([...(config.apis ?? []), ...(config.backends ?? [])].map((entry) => entry.id));
  const list = [...known].join(', ') || 'none';
  const issues: PlacementIssue[] = [];
  config.network.backends.forEach((backend, index) => {
    if (!known.has(backend.backend)) {
      issues.push({
        path: ['network', 'backends', index, 'backend'],
        message: `no API or backend with id "${backend.backend}" (known: ${list})`,
      });
    }
  });
  for (const id of Object.keys(config.tls?.backends ?? {})) {
    if (!known.has(id)) {
      issues.push({
        path: ['tls', 'backends', id],
        message: `no API or backend with id "${id}" (known: ${list})`,
      });
    }
  }
  return issues;
}

function covers(outer: ResolvedSource, inner: ResolvedSource): boolean {
  if (outer.kind === 'any') return true;
  if (inner.kind === 'any') return false;
  if (outer.negate !== inner.negate) return false;
  const outerPrefixes = outer.prefixes.map((text) => parsePrefix(text)!);
  const innerPrefixes = inner.prefixes.map((text) => parsePrefix(text)!);
  return outer.negate
    ? outerPrefixes.every((o) => innerPrefixes.some((i) => prefixContains(i, o)))
    : innerPrefixes.every((i) => outerPrefixes.some((o) => prefixContains(o, i)));
}
