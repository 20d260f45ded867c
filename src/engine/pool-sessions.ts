/**
 * API Management's session awareness for load-balanced pools (`pool.sessionAffinity`,
 * https://learn.microsoft.com/azure/api-management/backends#session-awareness): the gateway sets a session cookie,
 * and the requests that carry it go to the backend of the pool the session is on, while that backend's circuit
 * breaker is closed. A session whose backend is tripped (or no longer in the pool) goes to the backend the pool
 * chooses then, and the answer's cookie names that one from then on.
 *
 * The cookie's value is `<session id>.<tag>`: a random session id and a tag of the backend (a digest of the pool,
 * the backend's id and URL), so any engine of any machine reads it the same without shared state, and the client
 * learns neither the backend's id nor its URL. A value that is not of that shape starts a new session.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ResolvedBackend } from '../config/backend-credentials.js';
import { poolMemberId } from '../config/backend-schema.js';
import type { BackendInfo, PoolSelection, PoolSession, RequestCookies } from '../policy/index.js';

/** One pool's affinity: its cookie, and the tag of each member both ways. */
interface Affinity {
  readonly cookie: string;
  readonly tagOf: ReadonlyMap<string, string>;
  readonly memberOf: ReadonlyMap<string, BackendInfo>;
}

const cookieValue = /^([A-Za-z0-9_-]{8,64})\.([A-Za-z0-9_-]{12})$/;

export class PoolSessions {
  readonly #pools = new Map<string, Affinity>();

  constructor(entities: readonly ResolvedBackend[], singles: ReadonlyMap<string, BackendInfo>) {
    for (const entity of entities) {
      const cookie = entity.pool?.sessionAffinity?.sessionId.name;
      if (entity.type !== 'pool' || cookie === undefined) continue;
      const tagOf = new Map<string, string>();
      const memberOf = new Map<string, BackendInfo>();
      for (const service of entity.pool?.services ?? []) {
        const member = singles.get(poolMemberId(service.id));
        if (member === undefined) continue;
        const tag = createHash('sha256')
          .update(`${entity.id}\n${member.id}\n${member.url}`)
          .digest('base64url')
          .slice(0, 12);
        tagOf.set(member.id, tag);
        memberOf.set(tag, member);
      }
      this.#pools.set(entity.id, { cookie, tagOf, memberOf });
    }
  }

  /**
   * The request's session of `poolId` (undefined: the pool keeps none) and the member its cookie names, if the
   * cookie names one of the pool's.
   */
  read(
    poolId: string,
    cookies: RequestCookies | undefined,
  ): { readonly id: string; readonly member?: BackendInfo } | undefined {
    const affinity = this.#pools.get(poolId);
    if (affinity === undefined) return undefined;
    const match = cookieValue.exec(cookies?.(affinity.cookie) ?? '');
    if (match === null) return { id: randomBytes(12).toString('base64url') };
    const member = affinity.memberOf.get(match[2]!);
    return member === undefined ? { id: match[1]! } : { id: match[1]!, member };
  }

  /**
   * The `Set-Cookie` value for the backend the request went to: none when the client's cookie named it already (or
   * the request came from no pool keeping sessions).
   */
  cookie(selection: PoolSelection): string | undefined {
    const { poolId, backendId, session } = selection;
    if (poolId === undefined || backendId === undefined || session === undefined) return undefined;
    if (session.pinned === backendId) return undefined;
    const affinity = this.#pools.get(poolId);
    const tag = affinity?.tagOf.get(backendId);
    if (affinity === undefined || tag === undefined) return undefined;
    // A session cookie (no expiry): the session ends with the client's; HttpOnly, as no script needs to read it.
    return `${affinity.cookie}=${session.id}.${tag}; Path=/; HttpOnly`;
  }
}

/** The session as a choice reports it: pinned when the cookie's backend was taken. */
export function poolSession(id: string, pinned?: string): PoolSession {
  return pinned === undefined ? { id } : { id, pinned };
}
