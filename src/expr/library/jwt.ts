/**
 * AsJwt / TryParseJwt and the Jwt type; AsBasic / TryParseBasic and BasicAuthCredentials. Like API Management, these
 * only decode: they never verify a signature (validate-jwt does that).
 */

import { StringValuesMap } from '../context.js';
import { defineExtensions, defineType, prop } from '../runtime/core.js';
import { CsDateTime, TICKS_PER_SECOND, UNIX_EPOCH_TICKS } from '../runtime/values.js';
import { setOut, str } from './helpers.js';
import { StringType } from './string.js';

export class Jwt {
  readonly header: Record<string, unknown>;
  readonly payload: Record<string, unknown>;
  readonly claims: StringValuesMap;
  constructor(
    readonly token: string,
    header: Record<string, unknown>,
    payload: Record<string, unknown>,
  ) {
    this.header = header;
    this.payload = payload;
    this.claims = new StringValuesMap(false);
    for (const [k, v] of Object.entries(payload)) {
      const values = Array.isArray(v) ? v : [v];
      this.claims.set(
        k,
        values.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))),
      );
    }
  }
  claim(name: string): string | null {
    const v = this.payload[name];
    return typeof v === 'string' ? v : v === undefined || v === null ? null : String(v);
  }
  time(name: string): CsDateTime | null {
    const v = this.payload[name];
    if (typeof v !== 'number') return null;
    return new CsDateTime(BigInt(Math.trunc(v)) * TICKS_PER_SECOND + UNIX_EPOCH_TICKS, 'Utc');
  }
}

function b64urlJson(part: string): Record<string, unknown> | null {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(part)) return null;
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Decodes a compact JWS (optionally with a "Bearer " prefix), or returns null when it is not one. */
export function parseJwt(token: string): Jwt | null {
  const t = token.trim().replace(/^Bearer\s+/i, '');
  const parts = t.split('.');
  if (parts.length !== 3 && parts.length !== 5) return null;
  const header = b64urlJson(parts[0]!);
  const payload = parts.length === 3 ? b64urlJson(parts[1]!) : null;
  if (!header || !payload) return null;
  return new Jwt(t, header, payload);
}

export const JwtType = defineType({
  name: 'Jwt',
  classes: [Jwt],
  props: {
    Algorithm: prop((j: Jwt) => (typeof j.header.alg === 'string' ? j.header.alg : null)),
    Type: prop((j: Jwt) => (typeof j.header.typ === 'string' ? j.header.typ : null)),
    Id: prop((j: Jwt) => j.claim('jti')),
    Issuer: prop((j: Jwt) => j.claim('iss')),
    Subject: prop((j: Jwt) => j.claim('sub')),
    Audiences: prop((j: Jwt) => {
      const a = j.payload.aud;
      return a === undefined ? [] : (Array.isArray(a) ? a : [a]).map(String);
    }),
    ExpirationTime: prop((j: Jwt) => j.time('exp')),
    NotBefore: prop((j: Jwt) => j.time('nbf')),
    IssuedAt: prop((j: Jwt) => j.time('iat')),
    Claims: prop((j: Jwt) => j.claims),
  },
  methods: { ToString: (_rt, j: Jwt) => j.token },
});

export class BasicCredentials {
  constructor(
    readonly userId: string,
    readonly password: string,
  ) {}
}

export function parseBasic(value: string): BasicCredentials | null {
  const m = /^\s*Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(value) ?? /^\s*([A-Za-z0-9+/=]+)\s*$/.exec(value);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return null;
  return new BasicCredentials(decoded.slice(0, i), decoded.slice(i + 1));
}

export const BasicType = defineType({
  name: 'BasicAuthCredentials',
  classes: [BasicCredentials],
  props: {
    UserId: prop((b: BasicCredentials) => b.userId),
    Username: prop((b: BasicCredentials) => b.userId),
    Password: prop((b: BasicCredentials) => b.password),
  },
});

/** string.AsJwt() / TryParseJwt(out jwt) and AsBasic() / TryParseBasic(out credentials). */
defineExtensions({
  declaredBy: "API Management's Jwt and Basic extensions",
  receiver: StringType,
  methods: {
    AsJwt: (_rt, self: string) => parseJwt(str(self)),
    TryParseJwt: (_rt, self: string, args) => {
      const j = parseJwt(str(self));
      setOut(args[0], j);
      return j !== null;
    },
    AsBasic: (_rt, self: string) => parseBasic(str(self)),
    TryParseBasic: (_rt, self: string, args) => {
      const b = parseBasic(str(self));
      setOut(args[0], b);
      return b !== null;
    },
  },
});
