import type { IdentitySourceConfig, IdentitySourceType } from '../options.js';
import type { TokenSource } from '../token-source.js';
import { azureImdsSource } from './azure-imds.js';
import { clientCredentialsSource } from './client-credentials.js';
import type { SourceContext } from './context.js';
import { federatedSource } from './federated.js';
import { portcullisSource } from './portcullis.js';

type Factory<T extends IdentitySourceType> = (
  config: Extract<IdentitySourceConfig, { type: T }>,
  context: SourceContext,
) => TokenSource;

/** Every kind of token source, by its `type` in `identities.sources`. */
export const SOURCE_TYPES: { readonly [T in IdentitySourceType]: Factory<T> } = {
  portcullis: portcullisSource,
  'client-credentials': clientCredentialsSource,
  'azure-imds': azureImdsSource,
  federated: federatedSource,
};

export function createSource(config: IdentitySourceConfig, context: SourceContext): TokenSource {
  return (SOURCE_TYPES[config.type] as Factory<IdentitySourceType>)(config as never, context);
}

export type { SourceContext } from './context.js';
