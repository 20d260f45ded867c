import { z } from 'zod';
import { parseAddress, parsePrefix, prefixContains, prefixesOverlap } from './ip-prefixes.js';

/**
 * The `network` and `tls` sections: where the gateway listens (spec §4.3.7), the inbound rules of its ports, the
 * access rules in front of backends (§4.3.1), TLS on the HTTPS listener with optional client certificates, and the
 * client certificates Envoy presents to backends (authentication-certificate).
 *
 * ```yaml
 * network:
 *   mode: external                  # none | external | internal
 *   addressSpace: 10.0.0.0/16       # one address space split into a resource subnet and a gateway subnet
 *   subnets: { resources: 10.0.0.0/24, gateway: 10.0.1.0/24 }
 *   publicAddress: 203.0.113.10     # external mode only
 *   privateAddress: 10.0.1.4        # inside the gateway subnet
 *   inbound:
 *     - { name: allow-http, priority: 100, port: 80, source: Internet, access: allow }
 *     - { name: allow-https, priority: 110, port: 443, source: Internet, access: allow }
 *     - { name: allow-management, priority: 120, port: 3443, source: VirtualNetwork, access: allow }
 *   backends:
 *     - backend: courses            # an API or named backend id
 *       listen: { host: 10.0.0.4, port: 80 }
 *       target: { host: 127.0.0.1, port: 8081 }
 *       # rules default to the spec's two: allow GatewaySubnet 299, deny * 300
 * tls:
 *   port: 443
 *   certificate: tls/server.pem     # both absent: a development certificate is made at first start
 *   key: tls/server.key
 *   clientCertificates: { mode: optional, trustedCa: tls/clients-ca.pem }
 *   certificates: { courses-client: { certificate: tls/client.pem, key: tls/client.key } }
 *   backends: { courses: { certificateId: courses-client, trustedCa: tls/backend-ca.pem } }
 * ```
 *
 * Rules work like a network security group's: the rule with the lowest priority number that matches the source
 * (and port) decides; when none does, the group's defaults apply (allow from the virtual network, priority 65000,
 * then deny everything, 65500). How they are resolved and decided: network-rules.ts; the checks across sections
 * (ports open to what their mode needs, references to APIs and backends): network-placement.ts.
 */

const port = z.number().int().min(1).max(65535);

const prefixText = z.string().refine((text) => text.includes('/') && parsePrefix(text) !== undefined, {
  message: 'must be an address prefix such as "10.0.1.0/24"',
});

const addressText = z.string().refine((text) => parseAddress(text) !== undefined, {
  message: 'must be an IPv4 or IPv6 address',
});

/** Service tags a rule's source may name instead of a prefix, as a network security group's rules do. */
export const sourceTags = ['*', 'Internet', 'VirtualNetwork', 'GatewaySubnet', 'ResourceSubnet'] as const;
export type SourceTag = (typeof sourceTags)[number];

const sourceText = z.string().refine((text) => isSourceTag(text) || parsePrefix(text) !== undefined, {
  message: `must be an address, an address prefix or one of ${sourceTags.map((tag) => `"${tag}"`).join(', ')}`,
});

function isSourceTag(text: string): text is SourceTag {
  return (sourceTags as readonly string[]).includes(text);
}

const ruleName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+$/, { message: 'must be letters, digits, "-", "_" or "."' });

/** Priorities as a network security group takes them: lower numbers win. */
const priority = z.number().int().min(100).max(4096);

export const accessRuleSchema = z
  .object({
    name: ruleName,
    priority,
    access: z.enum(['allow', 'deny']),
    source: sourceText,
  })
  .strict();

export const inboundRuleSchema = accessRuleSchema
  .extend({
    /** The destination port; `*` for every port of the gateway. */
    port: z.union([port, z.literal('*')]),
  })
  .strict();

const endpoint = z.object({ host: addressText, port }).strict();

/** The spec's backend restriction (§4.3.1): only the gateway reaches the backend. */
export const defaultBackendRules: readonly AccessRuleConfig[] = [
  { name: 'allow-gateway', priority: 299, access: 'allow', source: 'GatewaySubnet' },
  { name: 'deny-any', priority: 300, access: 'deny', source: '*' },
];

/** A backend that needs only a private address, behind an Envoy sidecar enforcing its access rules. */
export const backendRestrictionSchema = z
  .object({
    /** The API or named backend (id) this sidecar fronts. */
    backend: z.string().regex(/^[A-Za-z0-9_-]+$/, { message: 'must be letters, digits, "-" or "_"' }),
    /** The backend's private address, where the sidecar listens. */
    listen: endpoint,
    /** The backend process itself, reached by the sidecar (usually on the backend host's loopback). */
    target: z.object({ host: z.string().min(1), port }).strict(),
    /** The sidecar's Envoy admin listener (loopback of the backend host). */
    admin: z
      .object({ host: z.string().min(1).default('127.0.0.1'), port: port.default(9902) })
      .strict()
      .default({ host: '127.0.0.1', port: 9902 }),
    rules: z
      .array(accessRuleSchema)
      .min(1)
      .default([...defaultBackendRules]),
  })
  .strict();

export const networkConfigSchema = z
  .object({
    mode: z.enum(['none', 'external', 'internal']).default('none'),
    addressSpace: prefixText.optional(),
    subnets: z.object({ resources: prefixText, gateway: prefixText }).strict().optional(),
    /** Where the public listeners bind in external mode (the load balancer's frontend address). */
    publicAddress: addressText.optional(),
    /** The gateway's address in the gateway subnet. */
    privateAddress: addressText.optional(),
    /** The management listener (Envoy's readiness and statistics, read-only), bound in external and internal mode. */
    managementPort: port.default(3443),
    inbound: z.array(inboundRuleSchema).default([]),
    backends: z.array(backendRestrictionSchema).default([]),
  })
  .strict()
  .superRefine((network, ctx) => {
    const issue = (path: (string | number)[], message: string) =>
      ctx.addIssue({ code: 'custom', path, message });
    const space = network.addressSpace ? parsePrefix(network.addressSpace) : undefined;
    const subnets = network.subnets && {
      resources: parsePrefix(network.subnets.resources),
      gateway: parsePrefix(network.subnets.gateway),
    };
    if (network.mode !== 'none') {
      if (!network.addressSpace) issue(['addressSpace'], `is required in ${network.mode} mode`);
      if (!network.subnets) issue(['subnets'], `is required in ${network.mode} mode`);
      if (!network.privateAddress) issue(['privateAddress'], `is required in ${network.mode} mode`);
    }
    if (network.mode === 'external' && !network.publicAddress) {
      issue(['publicAddress'], 'is required in external mode');
    }
    if (network.mode === 'internal' && network.publicAddress) {
      issue(['publicAddress'], 'internal mode binds only private addresses; remove it or use mode external');
    }
    if (network.mode === 'none' && network.inbound.length > 0) {
      issue(['inbound'], 'inbound rules apply to the external and internal modes; set network.mode');
    }
    if (space && subnets) {
      for (const name of ['resources', 'gateway'] as const) {
        const subnet = subnets[name];
        if (subnet && !prefixContains(space, subnet)) {
          issue(
            ['subnets', name],
            `${network.subnets![name]} is outside the address space ${network.addressSpace}`,
          );
        }
      }
      if (subnets.resources && subnets.gateway && prefixesOverlap(subnets.resources, subnets.gateway)) {
        issue(['subnets', 'gateway'], 'the gateway subnet must not overlap the resource subnet');
      }
    }
    const privateAddress = network.privateAddress ? parsePrefix(network.privateAddress) : undefined;
    if (privateAddress && subnets?.gateway && !prefixContains(subnets.gateway, privateAddress)) {
      issue(
        ['privateAddress'],
        `${network.privateAddress} is not in the gateway subnet ${network.subnets!.gateway}`,
      );
    }
    const publicAddress = network.publicAddress ? parsePrefix(network.publicAddress) : undefined;
    if (publicAddress && space && prefixContains(space, publicAddress)) {
      issue(
        ['publicAddress'],
        `${network.publicAddress} is inside the address space; a public address is outside it`,
      );
    }
    checkRules(network.inbound, ['inbound'], network, issue);
    const seen = new Map<string, number>();
    network.backends.forEach((backend, index) => {
      const previous = seen.get(backend.backend);
      if (previous !== undefined) {
        issue(
          ['backends', index, 'backend'],
          `"${backend.backend}" already has a sidecar (backends[${previous}])`,
        );
      }
      seen.set(backend.backend, index);
      const listen = parsePrefix(backend.listen.host);
      if (listen && subnets?.resources && !prefixContains(subnets.resources, listen)) {
        issue(
          ['backends', index, 'listen', 'host'],
          `${backend.listen.host} is not in the resource subnet ${network.subnets!.resources}`,
        );
      }
      checkRules(backend.rules, ['backends', index, 'rules'], network, issue);
    });
  });

function checkRules(
  rules: readonly (AccessRuleConfig & { port?: number | '*' })[],
  path: (string | number)[],
  network: { addressSpace?: string | undefined; subnets?: unknown },
  issue: (path: (string | number)[], message: string) => void,
): void {
  const priorities = new Map<string, number>();
  const names = new Map<string, number>();
  rules.forEach((rule, index) => {
    // As in a security group, two rules with one priority (for the same port) would make the order undefined.
    const key = `${rule.port ?? ''}/${rule.priority}`;
    const previous = priorities.get(key);
    if (previous !== undefined) {
      issue(
        [...path, index, 'priority'],
        `priority ${rule.priority} is already used by ${formatPath(path)}[${previous}]`,
      );
    }
    priorities.set(key, index);
    const sameName = names.get(rule.name);
    if (sameName !== undefined) {
      issue(
        [...path, index, 'name'],
        `rule name "${rule.name}" is already used by ${formatPath(path)}[${sameName}]`,
      );
    }
    names.set(rule.name, index);
    if ((rule.source === 'Internet' || rule.source === 'VirtualNetwork') && !network.addressSpace) {
      issue([...path, index, 'source'], `"${rule.source}" needs network.addressSpace`);
    }
    if ((rule.source === 'GatewaySubnet' || rule.source === 'ResourceSubnet') && !network.subnets) {
      issue([...path, index, 'source'], `"${rule.source}" needs network.subnets`);
    }
  });
}

function formatPath(path: readonly (string | number)[]): string {
  return `network.${path
    .map((key) => (typeof key === 'number' ? `[${key}]` : key))
    .join('.')
    .replace(/\.\[/g, '[')}`;
}

const pemFile = z.string().min(1);

export const tlsConfigSchema = z
  .object({
    /** Where the HTTPS listener binds when network.mode is none (the placement addresses otherwise). */
    host: addressText.default('0.0.0.0'),
    /** Stands for 443; 8443 by default so an unprivileged user can start it. */
    port: port.default(8443),
    /** PEM files, relative to the configuration file. Both absent: a development certificate is made. */
    certificate: pemFile.optional(),
    key: pemFile.optional(),
    /** Host names of the development certificate. */
    developmentHostnames: z.array(z.string().min(1)).min(1).default(['localhost']),
    /** Downstream mTLS: ask clients for a certificate; policies (validate-client-certificate) decide. */
    clientCertificates: z
      .object({
        /** `required` refuses a TLS connection without a certificate; `optional` lets policies decide. */
        mode: z.enum(['optional', 'required']).default('optional'),
        /** CAs a client certificate must chain to for validate-trust (Envoy also accepts others, so policies see them). */
        trustedCa: pemFile.optional(),
      })
      .strict()
      .optional(),
    /** The gateway's certificate store by id (authentication-certificate's certificate-id). */
    certificates: z
      .record(
        z.string().regex(/^[A-Za-z0-9_.-]+$/),
        z.object({ certificate: pemFile, key: pemFile }).strict(),
      )
      .default({}),
    /** The client certificate Envoy presents to a backend (an API id or a named backend id) over TLS. */
    backends: z
      .record(
        z.string().regex(/^[A-Za-z0-9_-]+$/),
        z
          .object({
            certificateId: z.string().min(1),
            /** CA of the backend's server certificate; the system store when absent. */
            trustedCa: pemFile.optional(),
            /** SNI and the name checked in the backend's certificate; the URL's host when absent. */
            serverName: z.string().min(1).optional(),
          })
          .strict(),
      )
      .default({}),
  })
  .strict()
  .superRefine((tls, ctx) => {
    if ((tls.certificate === undefined) !== (tls.key === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [tls.certificate === undefined ? 'certificate' : 'key'],
        message: 'certificate and key go together (leave both out for a development certificate)',
      });
    }
    for (const [id, backend] of Object.entries(tls.backends)) {
      if (!(backend.certificateId in tls.certificates)) {
        ctx.addIssue({
          code: 'custom',
          path: ['backends', id, 'certificateId'],
          message: `no certificate "${backend.certificateId}" in tls.certificates (known: ${Object.keys(tls.certificates).join(', ') || 'none'})`,
        });
      }
    }
  });

export type NetworkConfig = z.infer<typeof networkConfigSchema>;
export type TlsConfig = z.infer<typeof tlsConfigSchema>;
export type AccessRuleConfig = z.infer<typeof accessRuleSchema>;
export type InboundRuleConfig = z.infer<typeof inboundRuleSchema>;
export type BackendRestrictionConfig = z.infer<typeof backendRestrictionSchema>;
