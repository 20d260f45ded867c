import { describe, expect, it } from 'vitest';
import type { LimitStore, QuotaRequest } from '../../src/state/limits.js';

/**
 * The one specification of a LimitStore, run against every backend (in-process, embedded, Redis). A backend on a
 * fake clock moves it in `advance`; one on a real clock (Redis keeps its own) waits, so cases use fresh keys,
 * periods long enough not to roll over while a case runs, and (for expiry) real waits of about a second.
 */
export interface LimitStoreBackend {
  store: LimitStore;
  /** Moves time forward (fake clock) or waits (real clock). */
  advance(ms: number): Promise<void>;
  /**
   * Another store on the same shared state, as a second engine process would open it (another Redis connection,
   * another LMDB environment on the same directory); absent for a store no other process can share.
   */
  sibling?: () => LimitStore | Promise<LimitStore>;
}

let unique = 0;
const key = (name: string) => `${name}-${process.pid}-${++unique}`;

/** `sharesState`: the backend's stores can be opened twice on one state (embedded, Redis): the two-process cases run. */
export function limitStoreSuite(name: string, backend: () => LimitStoreBackend, sharesState = false): void {
  describe(`${name}: sliding window`, () => {
    it('admits exactly `limit` calls, then refuses with the remaining count at 0', async () => {
      const { store } = backend();
      const k = key('sw');
      const results = [];
      for (let i = 0; i < 5; i++)
        results.push(
          await store.slidingWindow({ key: k, limit: 3, periodSeconds: 60, amount: 1, mode: 'consume' }),
        );
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, false, false]);
      expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0, 0]);
      expect(results[3]!.used).toBe(3);
      // The first call leaves the window 60 s (plus at most its one-second bucket) after it was made.
      expect(results[3]!.retryAfterSeconds).toBeGreaterThanOrEqual(59);
      expect(results[3]!.retryAfterSeconds).toBeLessThanOrEqual(61);
    });

    it('counts increment-count at once and refuses an amount that does not fit', async () => {
      const { store } = backend();
      const k = key('amount');
      const first = await store.slidingWindow({
        key: k,
        limit: 10,
        periodSeconds: 60,
        amount: 7,
        mode: 'consume',
      });
      expect(first).toMatchObject({ allowed: true, used: 7, remaining: 3 });
      const second = await store.slidingWindow({
        key: k,
        limit: 10,
        periodSeconds: 60,
        amount: 4,
        mode: 'consume',
      });
      expect(second).toMatchObject({ allowed: false, used: 7, remaining: 3 });
      const third = await store.slidingWindow({
        key: k,
        limit: 10,
        periodSeconds: 60,
        amount: 3,
        mode: 'consume',
      });
      expect(third).toMatchObject({ allowed: true, used: 10, remaining: 0 });
    });

    it('check does not count; add counts past the limit', async () => {
      const { store } = backend();
      const k = key('modes');
      const check = await store.slidingWindow({
        key: k,
        limit: 1,
        periodSeconds: 60,
        amount: 1,
        mode: 'check',
      });
      expect(check).toMatchObject({ allowed: true, used: 0, remaining: 1 });
      await store.slidingWindow({ key: k, limit: 1, periodSeconds: 60, amount: 1, mode: 'add' });
      const added = await store.slidingWindow({
        key: k,
        limit: 1,
        periodSeconds: 60,
        amount: 1,
        mode: 'add',
      });
      expect(added).toMatchObject({ allowed: true, used: 2, remaining: 0 });
      const refused = await store.slidingWindow({
        key: k,
        limit: 1,
        periodSeconds: 60,
        amount: 1,
        mode: 'check',
      });
      expect(refused.allowed).toBe(false);
    });

    it('keys are independent', async () => {
      const { store } = backend();
      const a = key('a');
      const b = key('b');
      await store.slidingWindow({ key: a, limit: 1, periodSeconds: 60, amount: 1, mode: 'consume' });
      const other = await store.slidingWindow({
        key: b,
        limit: 1,
        periodSeconds: 60,
        amount: 1,
        mode: 'consume',
      });
      expect(other.allowed).toBe(true);
    });

    it('admits again once the calls have left the window', async () => {
      const { store, advance } = backend();
      const k = key('slide');
      expect(
        (await store.slidingWindow({ key: k, limit: 1, periodSeconds: 1, amount: 1, mode: 'consume' }))
          .allowed,
      ).toBe(true);
      const refused = await store.slidingWindow({
        key: k,
        limit: 1,
        periodSeconds: 1,
        amount: 1,
        mode: 'consume',
      });
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(2);
      await advance(refused.retryAfterSeconds * 1000 + 50);
      expect(
        (await store.slidingWindow({ key: k, limit: 1, periodSeconds: 1, amount: 1, mode: 'consume' }))
          .allowed,
      ).toBe(true);
    });
  });

  describe(`${name}: quota (fixed windows)`, () => {
    it('counts calls in a window and says when it renews', async () => {
      const { store } = backend();
      const k = key('quota');
      const request = {
        key: k,
        periodSeconds: 3600,
        originMs: Date.UTC(2000, 0, 1),
        callLimit: 2,
        kilobyteLimit: undefined,
        calls: 1,
        bytes: 0,
        mode: 'consume' as const,
      };
      const results = [await store.quota(request), await store.quota(request), await store.quota(request)];
      expect(results.map((r) => r.allowed)).toEqual([true, true, false]);
      expect(results[2]).toMatchObject({ exceeded: 'calls', calls: 2 });
      expect(results[2]!.renewsInSeconds).toBeGreaterThanOrEqual(1);
      expect(results[2]!.renewsInSeconds).toBeLessThanOrEqual(3600);
    });

    it('refuses on bandwidth once the bytes counted reach the limit', async () => {
      const { store } = backend();
      const k = key('bandwidth');
      const base = {
        key: k,
        periodSeconds: 3600,
        originMs: 0,
        callLimit: undefined,
        kilobyteLimit: 2,
        calls: 1,
        bytes: 0,
      };
      expect((await store.quota({ ...base, mode: 'check' })).allowed).toBe(true);
      await store.quota({ ...base, calls: 0, bytes: 2047, mode: 'add' });
      expect((await store.quota({ ...base, mode: 'check' })).allowed).toBe(true);
      await store.quota({ ...base, calls: 0, bytes: 1, mode: 'add' });
      const refused = await store.quota({ ...base, mode: 'check' });
      expect(refused).toMatchObject({ allowed: false, exceeded: 'bandwidth', bytes: 2048 });
    });

    it('a renewal period of 0 never renews', async () => {
      const { store } = backend();
      const request = {
        key: key('forever'),
        periodSeconds: 0,
        originMs: 0,
        callLimit: 1,
        kilobyteLimit: undefined,
        calls: 1,
        bytes: 0,
        mode: 'consume' as const,
      };
      await store.quota(request);
      const refused = await store.quota(request);
      expect(refused).toMatchObject({ allowed: false, renewsInSeconds: undefined });
    });

    it('starts a new window at the boundary', async () => {
      const { store, advance } = backend();
      // Windows of one second aligned on whole seconds.
      const request = {
        key: key('renew'),
        periodSeconds: 1,
        originMs: 0,
        callLimit: 1,
        kilobyteLimit: undefined,
        calls: 1,
        bytes: 0,
        mode: 'consume' as const,
      };
      const first = await store.quota(request);
      const second = await store.quota(request);
      // The first may land in the last instant of a window; then the second is in the next one.
      if (second.allowed) return;
      expect(first.allowed).toBe(true);
      await advance(second.renewsInSeconds! * 1000 + 20);
      expect((await store.quota(request)).allowed).toBe(true);
    });
  });

  describe(`${name}: concurrency`, () => {
    it('hands out at most `max` slots and reuses released ones', async () => {
      const { store } = backend();
      const k = key('conc');
      const a = await store.acquire(k, 2, 60);
      const b = await store.acquire(k, 2, 60);
      const c = await store.acquire(k, 2, 60);
      expect(a).toBeDefined();
      expect(b).toBeDefined();
      expect(c).toBeUndefined();
      await store.release(a!);
      expect(await store.acquire(k, 2, 60)).toBeDefined();
      expect(await store.acquire(k, 2, 60)).toBeUndefined();
    });

    it('a lease that is never released expires', async () => {
      const { store, advance } = backend();
      const k = key('lease');
      expect(await store.acquire(k, 1, 1)).toBeDefined();
      expect(await store.acquire(k, 1, 1)).toBeUndefined();
      await advance(1100);
      expect(await store.acquire(k, 1, 1)).toBeDefined();
    });
  });

  describe(`${name}: key space`, () => {
    const quotaRequest = (
      k: string,
      periodSeconds: number,
      originMs: number,
      callLimit: number,
    ): QuotaRequest => ({
      key: k,
      periodSeconds,
      originMs,
      callLimit,
      kilobyteLimit: undefined,
      calls: 1,
      bytes: 0,
      mode: 'consume',
    });

    it('a changed quota limit keeps counting the window; a changed renewal period or origin starts afresh', async () => {
      const { store } = backend();
      const k = key('reconfigured');
      // Never-renewing windows and windows of a century from 1970 both have index 0 now: only the period (and
      // then the origin) tells them apart.
      const century = 100 * 365 * 86_400;
      await store.quota(quotaRequest(k, 0, 0, 2));
      expect(await store.quota(quotaRequest(k, 0, 0, 3))).toMatchObject({ allowed: true, calls: 2 });
      expect(await store.quota(quotaRequest(k, 0, 0, 2))).toMatchObject({ allowed: false, calls: 2 });
      expect(await store.quota(quotaRequest(k, century, 0, 3))).toMatchObject({ allowed: true, calls: 1 });
      expect(await store.quota(quotaRequest(k, century, 1000, 3))).toMatchObject({ allowed: true, calls: 1 });
      expect(await store.quota(quotaRequest(k, century, 1000, 3))).toMatchObject({ allowed: true, calls: 2 });
    });

    it('a sliding window with a changed period still counts the calls made within the new one', async () => {
      const { store } = backend();
      const k = key('period');
      await store.slidingWindow({ key: k, limit: 5, periodSeconds: 60, amount: 2, mode: 'consume' });
      const longer = await store.slidingWindow({
        key: k,
        limit: 5,
        periodSeconds: 120,
        amount: 1,
        mode: 'consume',
      });
      expect(longer).toMatchObject({ allowed: true, used: 3 });
    });

    it('releasing a lease that is not held changes nothing', async () => {
      const { store } = backend();
      const k = key('unheld');
      await store.release({ key: k, token: 'nobody' });
      const lease = await store.acquire(k, 1, 60);
      await store.release({ key: k, token: 'nobody' });
      expect(await store.acquire(k, 1, 60)).toBeUndefined();
      await store.release(lease!);
    });
  });

  if (!sharesState) return;
  describe(`${name}: shared by two processes`, () => {
    it('two stores on the same state admit exactly one quota between them', async () => {
      const { store, sibling } = backend();
      const other = await siblingOf(name, sibling);
      const request = { ...{ key: key('shared-quota'), periodSeconds: 3600, originMs: 0 }, callLimit: 25 };
      const calls = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 === 0 ? store : other).quota({
            ...request,
            kilobyteLimit: undefined,
            calls: 1,
            bytes: 0,
            mode: 'consume',
          }),
        ),
      );
      expect(calls.filter((r) => r.allowed)).toHaveLength(25);
      expect(Math.max(...calls.map((r) => r.calls))).toBe(25);
    });

    it('two stores share one sliding window and one set of concurrency slots', async () => {
      const { store, sibling } = backend();
      const other = await siblingOf(name, sibling);
      const k = key('shared-window');
      const calls = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 === 0 ? store : other).slidingWindow({
            key: k,
            limit: 10,
            periodSeconds: 60,
            amount: 1,
            mode: 'consume',
          }),
        ),
      );
      expect(calls.filter((r) => r.allowed)).toHaveLength(10);
      const c = key('shared-slots');
      const lease = await store.acquire(c, 1, 60);
      expect(lease).toBeDefined();
      expect(await other.acquire(c, 1, 60)).toBeUndefined();
      await other.release(lease!);
      expect(await other.acquire(c, 1, 60)).toBeDefined();
    });
  });
}

function siblingOf(name: string, sibling: LimitStoreBackend['sibling']): LimitStore | Promise<LimitStore> {
  if (sibling === undefined)
    throw new Error(`${name} shares its state but its backend opens no sibling store`);
  return sibling();
}
