import { IdentityError } from '../errors.js';
import type { IdentitySourceConfig } from '../options.js';
import { callTokenEndpoint } from '../token-endpoint.js';
import type { TokenSource } from '../token-source.js';
import type { SourceContext } from './context.js';

type Config = Extract<IdentitySourceConfig, { type: 'azure-imds' }>;

/** The API versions whose answer shape (`expires_on` in epoch seconds) the token reader knows. */
const IMDS_API_VERSION = '2018-02-01';
const APP_SERVICE_API_VERSION = '2019-08-01';

/**
 * Azure managed identity: the Instance Metadata Service of a VM or AKS node (`Metadata: true`), or the local
 * endpoint App Service and Container Apps publish in IDENTITY_ENDPOINT, guarded by the IDENTITY_HEADER secret. A
 * policy's client-id (or the source's clientId) selects a user-assigned identity; none, the system-assigned one.
 */
export function azureImdsSource(config: Config, context: SourceContext): TokenSource {
  const what = `identity "${context.name}"`;
  return {
    actsForAnyClientId: true,
    async fetch({ resource, clientId }) {
      const appService = appServiceEndpoint(config, what);
      const url = new URL(appService?.endpoint ?? config.endpoint);
      url.searchParams.set('api-version', appService ? APP_SERVICE_API_VERSION : IMDS_API_VERSION);
      url.searchParams.set('resource', resource);
      const selected = clientId ?? config.clientId;
      if (selected !== undefined) url.searchParams.set('client_id', selected);
      const headers: Record<string, string> = appService
        ? { 'x-identity-header': appService.header }
        : { metadata: 'true' };
      return callTokenEndpoint({ label: what, url: url.toString(), method: 'GET', headers }, context.now());
    },
  };
}

function appServiceEndpoint(config: Config, what: string): { endpoint: string; header: string } | undefined {
  if (config.protocol === 'imds') return undefined;
  const endpoint = process.env.IDENTITY_ENDPOINT;
  const header = process.env.IDENTITY_HEADER;
  if (endpoint && header) return { endpoint, header };
  if (config.protocol === 'app-service')
    throw new IdentityError(
      'unavailable',
      `${what}: IDENTITY_ENDPOINT and IDENTITY_HEADER are not set (protocol app-service)`,
    );
  return undefined;
}
