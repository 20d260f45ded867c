import { randomUUID } from 'node:crypto';
import {
  countQuota,
  countSlidingWindow,
  type QuotaCounter,
  type Slot,
  takeSlot,
  type WindowBucket,
} from './limit-rules.js';
import type {
  ConcurrencyLease,
  LimitStore,
  QuotaRequest,
  QuotaResult,
  SlidingWindowRequest,
  SlidingWindowResult,
} from './limits.js';

interface Window {
  readonly buckets: readonly WindowBucket[];
  readonly expiresAt: number;
}

/** How often idle keys are swept, so a key that is never used again does not stay in memory. */
const SWEEP_EVERY = 1024;

/**
 * The in-process LimitStore: exact for one engine process, gone with it. The rules of limit-rules.ts over maps.
 */
export class MemoryLimitStore implements LimitStore {
  readonly #windows = new Map<string, Window>();
  readonly #quotas = new Map<string, QuotaCounter>();
  readonly #slots = new Map<string, readonly Slot[]>();
  #operations = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async slidingWindow(request: SlidingWindowRequest): Promise<SlidingWindowResult> {
    return this.slidingWindowSync(request);
  }

  slidingWindowSync(request: SlidingWindowRequest): SlidingWindowResult {
    const now = this.now();
    this.#sweep(now);
    const stored = this.#windows.get(request.key);
    const outcome = countSlidingWindow(stored?.buckets ?? [], request, now, stored?.expiresAt);
    if (outcome.changed)
      this.#windows.set(request.key, { buckets: outcome.buckets, expiresAt: outcome.expiresAt });
    return outcome.result;
  }

  async quota(request: QuotaRequest): Promise<QuotaResult> {
    const now = this.now();
    this.#sweep(now);
    const outcome = countQuota(this.#quotas.get(request.key), request, now);
    if (outcome.changed) this.#quotas.set(request.key, outcome.counter);
    return outcome.result;
  }

  async acquire(key: string, max: number, leaseSeconds: number): Promise<ConcurrencyLease | undefined> {
    const token = randomUUID();
    const slots = takeSlot(this.#slots.get(key) ?? [], max, leaseSeconds, this.now(), token);
    if (slots === undefined) return undefined;
    this.#slots.set(key, slots);
    return { key, token };
  }

  async release(lease: ConcurrencyLease): Promise<void> {
    const slots = this.#slots.get(lease.key)?.filter((slot) => slot.token !== lease.token);
    if (slots === undefined) return;
    if (slots.length === 0) this.#slots.delete(lease.key);
    else this.#slots.set(lease.key, slots);
  }

  /** Keys held right now (windows, quotas and concurrency keys), for tests and metrics. */
  get keyCount(): number {
    return this.#windows.size + this.#quotas.size + this.#slots.size;
  }

  #sweep(now: number): void {
    if (++this.#operations % SWEEP_EVERY !== 0) return;
    for (const [key, window] of this.#windows) if (window.expiresAt <= now) this.#windows.delete(key);
    for (const [key, counter] of this.#quotas) if (counter.expiresAt <= now) this.#quotas.delete(key);
    for (const [key, slots] of this.#slots) {
      const held = slots.filter((slot) => slot.expiresAt > now);
      if (held.length === 0) this.#slots.delete(key);
      else if (held.length !== slots.length) this.#slots.set(key, held);
    }
  }
}
