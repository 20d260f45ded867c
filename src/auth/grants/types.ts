import type { ServerContext, TokenResponse } from '../server-context.js';
import type { ClientRecord, GrantType } from '../stores/types.js';

export interface GrantRequest {
  form: Map<string, string>;
  client: ClientRecord;
  server: ServerContext;
  /** The client's address, for the security log. */
  address: string;
}

/** One OAuth grant type: its name, the parameters it reads, and its handler. */
export interface GrantHandler {
  name: GrantType;
  /** Parameters this grant reads beyond grant_type and client authentication (others are ignored). */
  parameters: readonly string[];
  handle(request: GrantRequest): Promise<TokenResponse>;
}
