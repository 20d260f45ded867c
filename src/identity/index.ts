export { type Authorization, type AuthorizationRequest, CredentialManager } from './credential-manager.js';
export { IdentityError, type IdentityErrorCode } from './errors.js';
export { Identities, type IdentitiesOptions } from './identities.js';
export {
  type IdentitiesConfig,
  type IdentitySourceConfig,
  identitiesConfigSchema,
  identitySourceSchema,
  type SecretValue,
} from './options.js';
export { readSecret } from './secrets.js';
export type { IssuedToken, TokenRequest } from './token-source.js';
