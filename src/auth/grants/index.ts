import type { GrantType } from '../stores/types.js';
import { authorizationCode } from './authorization-code.js';
import { refreshToken } from './refresh-token.js';
import type { GrantHandler } from './types.js';

/** Every grant type the token endpoint serves; metadata's grant_types_supported is derived from this map. */
export const GRANTS: ReadonlyMap<GrantType, GrantHandler> = new Map(
  [authorizationCode, refreshToken].map((grant) => [grant.name, grant]),
);
