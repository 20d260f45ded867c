/**
 * `set-backend-service backend-id="…"` over API Management's backend entities
 * (https://learn.microsoft.com/azure/api-management/backends#load-balanced-pool): a single backend is itself unless
 * its circuit breaker is tripped; a pool's member is chosen in the highest priority group (lowest number) that has a
 * backend not tripped — "backends in lower priority groups only when all backends in higher priority groups are
 * unavailable because circuit breaker rules are tripped" — and within the group by weight (all weights 0: evenly).
 *
 * The choice is smooth weighted round-robin (nginx's): over any run of requests each member gets its share to within
 * one request, with no bursts. It is per engine, as API Management's is per gateway instance ("load balancing is
 * approximate"); the trips it skips are shared (backend-breakers.ts). A pool with session affinity first keeps a
 * client's session on its backend (pool-sessions.ts).
 */
import type { ResolvedBackend } from '../config/backend-credentials.js';
import { poolMemberId } from '../config/backend-schema.js';
import type {
  BackendChoice,
  BackendInfo,
  BackendLookup,
  PoolSelection,
  RequestCookies,
} from '../policy/index.js';
import type { BackendBreakers } from './backend-breakers.js';
import { PoolSessions, poolSession } from './pool-sessions.js';

interface Member {
  readonly backend: BackendInfo;
  readonly weight: number;
}

/** One priority group of a pool and its round-robin state. */
class PriorityGroup {
  readonly #current: number[];

  constructor(readonly members: readonly Member[]) {
    this.#current = members.map(() => 0);
  }

  /** The next member among those `open` allows, by smooth weighted round-robin. */
  next(open: readonly boolean[]): BackendInfo | undefined {
    const candidates = this.members.flatMap((_, index) => (open[index] ? [index] : []));
    if (candidates.length === 0) return undefined;
    const evenly = candidates.every((index) => this.members[index]!.weight === 0);
    const weightOf = (index: number) => (evenly ? 1 : this.members[index]!.weight);
    let total = 0;
    let best = -1;
    for (const index of candidates) {
      const weight = weightOf(index);
      total += weight;
      this.#current[index]! += weight;
      if (weight > 0 && (best === -1 || this.#current[index]! > this.#current[best]!)) best = index;
    }
    this.#current[best]! -= total;
    return this.members[best]!.backend;
  }
}

export class BackendPools implements BackendLookup {
  readonly #singles = new Map<string, BackendInfo>();
  readonly #pools = new Map<string, readonly PriorityGroup[]>();
  /** The pools with session affinity (pool-sessions.ts). */
  readonly sessions: PoolSessions;

  constructor(
    entities: readonly ResolvedBackend[],
    private readonly breakers: BackendBreakers,
  ) {
    for (const entity of entities)
      if (entity.type !== 'pool' && entity.url !== undefined)
        this.#singles.set(entity.id, { id: entity.id, url: entity.url });
    for (const entity of entities) {
      if (entity.type !== 'pool') continue;
      const byPriority = new Map<number, Member[]>();
      for (const service of entity.pool?.services ?? []) {
        const backend = this.#singles.get(poolMemberId(service.id));
        if (backend === undefined) continue;
        const group = byPriority.get(service.priority) ?? [];
        group.push({ backend, weight: service.weight });
        byPriority.set(service.priority, group);
      }
      const groups = [...byPriority.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, members]) => new PriorityGroup(members));
      this.#pools.set(entity.id, groups);
    }
    this.sessions = new PoolSessions(entities, this.#singles);
  }

  get(id: string): BackendInfo | undefined {
    return this.#singles.get(id);
  }

  async choose(id: string, cookies?: RequestCookies): Promise<BackendChoice> {
    const single = this.#singles.get(id);
    if (single !== undefined)
      return (await this.breakers.isTripped(id))
        ? { kind: 'unavailable', message: `Backend '${id}' is unavailable: its circuit breaker is tripped.` }
        : { kind: 'backend', backend: single };
    const groups = this.#pools.get(id);
    if (groups === undefined) return { kind: 'unknown' };
    // A session stays on its backend while that one's breaker is closed, whatever the priority groups say.
    const session = this.sessions.read(id, cookies);
    if (session?.member !== undefined && !(await this.breakers.isTripped(session.member.id)))
      return {
        kind: 'backend',
        backend: session.member,
        poolId: id,
        session: poolSession(session.id, session.member.id),
      };
    for (const group of groups) {
      const open = await Promise.all(
        group.members.map(async (member) => !(await this.breakers.isTripped(member.backend.id))),
      );
      const backend = group.next(open);
      if (backend !== undefined)
        return {
          kind: 'backend',
          backend,
          poolId: id,
          ...(session === undefined ? {} : { session: poolSession(session.id) }),
        };
    }
    return {
      kind: 'unavailable',
      message: `Backend pool '${id}' is unavailable: the circuit breaker of every backend in it is tripped.`,
    };
  }

  sessionCookie(selection: PoolSelection): string | undefined {
    return this.sessions.cookie(selection);
  }
}
