import type { ResourceKind } from '../context.js';

/** The instance's folders Portcullis has no place for, and why. */
const why: Record<string, string> = {
  tags: 'tags are not kept',
  loggers:
    'loggers (Application Insights, Azure Monitor, Event Hubs) are not carried over: log-to-eventhub loggers are state.loggers',
  diagnostics: 'diagnostics settings are not supported: see the engine metrics and access log',
  gateways: 'self-hosted gateways are not carried over: Portcullis is the gateway',
  workspaces: 'workspaces are not supported',
  policyRestrictions: 'policy restrictions are not supported',
  schemas: 'global schemas are not kept',
  authorizationServers:
    'developer-portal authorization servers are not used (see auth for the OAuth 2.1 server)',
  identityProviders: 'developer-portal identity providers are not used (see auth.upstream)',
  certificates: 'certificates are not carried over: see tls.backends and tls.certificates',
  portalSettings: 'developer-portal settings are not used',
  openidConnectProviders: 'developer-portal OpenID Connect providers are not used',
};

/** Folders and files every other kind knows; the rest is listed, never passed over in silence. */
const known = new Set([
  'apis',
  'products',
  'backends',
  'users',
  'groups',
  'subscriptions',
  'named values',
  'namedValues',
  'policy fragments',
  'policyFragments',
  'version sets',
  'versionSets',
  'policy.xml',
]);

/** Whatever else the artifact folder holds: listed with the reason it is not carried over. */
export const notCarried: ResourceKind = {
  name: 'not carried over',
  importInto({ artifacts }) {
    for (const entry of [...artifacts.children('.'), ...artifacts.files('.')]) {
      if (known.has(entry) || entry.startsWith('.') || /^configuration\..*\.ya?ml$/.test(entry)) continue;
      artifacts.skip(entry, why[entry] ?? 'not supported by Portcullis');
    }
  },
  exportFrom() {},
};
