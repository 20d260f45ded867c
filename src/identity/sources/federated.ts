import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { IdentityError } from '../errors.js';
import type { IdentitySourceConfig } from '../options.js';
import { callTokenEndpoint, resourceParameters } from '../token-endpoint.js';
import type { TokenSource } from '../token-source.js';
import type { SourceContext } from './context.js';

type Config = Extract<IdentitySourceConfig, { type: 'federated' }>;

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * A token another issuer gave this workload (a Kubernetes projected service account token, a GitHub Actions OIDC
 * token, …) exchanged at a token endpoint: as the client assertion of a client credentials grant (Entra ID workload
 * identity federation), or as the assertion of RFC 7523's JWT bearer grant. The file is read for every exchange:
 * the kubelet rotates it in place.
 */
export function federatedSource(config: Config, context: SourceContext): TokenSource {
  const what = `identity "${context.name}"`;
  const file = path.resolve(context.directory, config.tokenFile);
  return {
    actsForAnyClientId: false,
    async fetch({ resource }) {
      let assertion: string;
      try {
        assertion = (await readFile(file, 'utf8')).trim();
      } catch (error) {
        throw new IdentityError(
          'unavailable',
          `${what}: cannot read the token file ${file} (${(error as NodeJS.ErrnoException).code})`,
        );
      }
      if (assertion === '')
        throw new IdentityError('unavailable', `${what}: the token file ${file} is empty`);
      const grant: [string, string][] =
        config.grant === 'jwt-bearer'
          ? [
              ['grant_type', JWT_BEARER_GRANT],
              ['assertion', assertion],
            ]
          : [
              ['grant_type', 'client_credentials'],
              ['client_assertion_type', ASSERTION_TYPE],
              ['client_assertion', assertion],
            ];
      const form = new URLSearchParams([
        ...grant,
        ['client_id', config.clientId],
        ...resourceParameters(resource, config.resourceAs, config.scopes),
        ...Object.entries(config.parameters),
      ]);
      return callTokenEndpoint({ label: what, url: config.tokenUrl, method: 'POST', form }, context.now());
    },
  };
}
