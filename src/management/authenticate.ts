import { createHash } from 'node:crypto';
import type { Context, Next } from 'koa';
import { LRUCache } from 'lru-cache';
import { DUMMY_PASSWORD_HASH, verifyPassword } from '../auth/crypto.js';
import { peerAddress } from '../auth/index.js';
import { clientAddressFrom, clientAddressHeader } from '../envoy/contract.js';
import { processLogger } from '../log.js';
import { ManagementError } from './errors.js';

export interface Administrator {
  readonly name: string;
  readonly passwordHash: string;
}

/** Failed attempts one client address may make in the window before it must wait. */
const failuresAllowed = 10;
const failureWindowMs = 5 * 60_000;
/** A credential checked once is trusted this long (scrypt is deliberately slow; scripts make many calls). */
const verifiedForMs = 60_000;

/**
 * HTTP Basic authentication of administrators (RFC 7617) against scrypt password hashes. A verified credential is
 * remembered for a minute under a digest of itself and the hash it matched — never in clear — so a changed or
 * removed administrator stops working at once. Each client address gets a few failures per window, then 429.
 */
export function authenticateAdministrators(administrators: () => readonly Administrator[]) {
  const verified = new LRUCache<string, string>({ max: 256, ttl: verifiedForMs });
  const failures = new LRUCache<string, number>({ max: 10_000, ttl: failureWindowMs });

  return async (ctx: Context, next: Next) => {
    const client = clientAddress(ctx);
    if ((failures.get(client) ?? 0) >= failuresAllowed) {
      throw new ManagementError(429, 'TooManyRequests', 'too many failed sign-ins; try again later', [], {
        'Retry-After': String(Math.ceil(failureWindowMs / 1000)),
      });
    }
    const credential = basicCredential(ctx.get('authorization'));
    const list = administrators();
    const administrator = credential && list.find((candidate) => candidate.name === credential.name);
    const key =
      credential && digestOf(`${credential.name}:${credential.password}:${administrator?.passwordHash}`);
    let ok = key !== undefined && administrator !== undefined && verified.get(key) === administrator.name;
    if (credential && !ok) {
      // An unknown name costs the same time as a wrong password.
      ok =
        (await verifyPassword(credential.password, administrator?.passwordHash ?? DUMMY_PASSWORD_HASH)) &&
        administrator !== undefined;
      if (ok && key) verified.set(key, administrator!.name);
    }
    if (!ok) {
      if (credential) {
        failures.set(client, (failures.get(client) ?? 0) + 1, { noUpdateTTL: failures.has(client) });
        processLogger.warn('management: sign-in refused', { administrator: credential.name, client });
      }
      throw new ManagementError(
        401,
        'Unauthorized',
        'an administrator credential is required (HTTP Basic)',
        [],
        {
          'WWW-Authenticate': 'Basic realm="Portcullis management", charset="UTF-8"',
        },
      );
    }
    ctx.state.administrator = administrator!.name;
    await next();
  };
}

function basicCredential(header: string): { name: string; password: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { name: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Only Envoy's management listener reaches this server (it listens on loopback): see `clientAddressFrom`. */
function clientAddress(ctx: Context): string {
  return clientAddressFrom(ctx.get(clientAddressHeader), peerAddress(ctx));
}

function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
