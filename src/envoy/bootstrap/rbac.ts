/** The access rules of a listener (and of a backend's sidecar) as Envoy's network RBAC filter. */

import type { NetworkRbacFilter, RbacOnMatch, RbacPredicate } from '../config-types.js';
import type { AccessRule } from './plan.js';

/**
 * An RBAC network filter that behaves as a network security group: the rules, already in priority order, are a
 * matcher list (the first matching rule decides, allow or deny) and a connection no rule matches is refused.
 * Counters: `<statPrefix>rbac.allowed` / `rbac.denied`.
 */
export function rbacFilter(statPrefix: string, rules: readonly AccessRule[]): NetworkRbacFilter {
  const action = (name: string, access: 'allow' | 'deny'): RbacOnMatch => ({
    action: {
      name,
      typed_config: {
        '@type': 'type.googleapis.com/envoy.config.rbac.v3.Action',
        name,
        action: access === 'allow' ? 'ALLOW' : 'DENY',
      },
    },
  });
  return {
    name: 'envoy.filters.network.rbac',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC',
      stat_prefix: statPrefix,
      matcher: {
        matcher_list: {
          matchers: rules.map((rule) => ({
            predicate: sourcePredicate(rule.source),
            on_match: action(`${rule.priority}_${rule.name}`, rule.access),
          })),
        },
        on_no_match: action('no_rule_matched', 'deny'),
      },
    },
  };
}

function sourcePredicate(source: AccessRule['source']): RbacPredicate {
  const prefixes = source.kind === 'any' ? ['0.0.0.0/0', '::/0'] : source.prefixes;
  const single: RbacPredicate = {
    single_predicate: {
      input: {
        name: 'envoy.matching.inputs.source_ip',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.matching.common_inputs.network.v3.SourceIPInput',
        },
      },
      custom_match: {
        name: 'envoy.matching.matchers.ip',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.matching.input_matchers.ip.v3.Ip',
          stat_prefix: 'source_ip',
          cidr_ranges: prefixes.map((prefix) => {
            const [address, length] = prefix.split('/');
            return { address_prefix: address, prefix_len: Number(length) };
          }),
        },
      },
    },
  };
  return source.kind === 'prefixes' && source.negate ? { not_matcher: single } : single;
}
