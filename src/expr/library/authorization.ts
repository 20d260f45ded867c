/**
 * The `Authorization` type get-authorization-context stores in its context variable (API Management's credential
 * manager): the connection's access token and the claims the token endpoint (or the token itself) stated.
 */
import { defineType, prop } from '../runtime/core.js';
import { CsDictionary } from './collections.js';

export class AuthorizationContext {
  readonly claims: CsDictionary;
  constructor(
    readonly accessToken: string,
    claims: Readonly<Record<string, unknown>>,
  ) {
    // IReadOnlyDictionary<string, object>: filled here, never grown by an expression.
    this.claims = new CsDictionary();
    for (const [key, value] of Object.entries(claims)) {
      this.claims.map.set(key, { key, value: typeof value === 'string' ? value : JSON.stringify(value) });
    }
  }
}

export const AuthorizationType = defineType({
  name: 'Authorization',
  classes: [AuthorizationContext],
  props: {
    AccessToken: prop((a: AuthorizationContext) => a.accessToken),
    Claims: prop((a: AuthorizationContext) => a.claims),
  },
});
