// oidc-provider ships no type declarations; this covers only what bench/oauth-grants.ts uses.
declare module 'oidc-provider' {
  import type { RequestListener } from 'node:http';

  interface TokenModel {
    save(): Promise<string>;
  }
  interface GrantModel extends TokenModel {
    addResourceScope(resource: string, scope: string): void;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): RequestListener;
    on(event: 'server_error', listener: (ctx: unknown, err: Error) => void): this;
    Client: { find(id: string): Promise<unknown> };
    Grant: new (payload: {
      accountId: string;
      clientId: string;
    }) => GrantModel;
    AuthorizationCode: new (
      payload: Record<string, unknown>,
    ) => TokenModel;
    RefreshToken: new (
      payload: Record<string, unknown>,
    ) => TokenModel;
  }
}
