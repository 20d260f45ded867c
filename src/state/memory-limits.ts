import { randomUUID } from 'node:crypto';
import {
  bucketMs,
  type ConcurrencyLease,
  type LimitStore,
  type QuotaRequest,
  type QuotaResult,
  quotaWindow,
  type SlidingWindowRequest,
  type SlidingWindowResult,
} from './limits.js';

interface Window {
  /** bucket index → calls in it and the time of the latest of them */
  readonly buckets: Map<number, { count: number; last: number }>;
  expiresAt: number;
}

interface QuotaCounter {
  index: number;
  calls: number;
  bytes: number;
  expiresAt: number;
}

/** How often idle keys are swept, so a key that is never used again does not stay in memory. */
const SWEEP_EVERY = 1024;

/**
 * The in-process LimitStore: exact for one engine process. The same semantics as the Redis scripts (see
 * redis-limits.ts), written as plain TypeScript over maps.
 */
export class MemoryLimitStore implements LimitStore {
  readonly #windows = new Map<string, Window>();
  readonly #quotas = new Map<string, QuotaCounter>();
  /** key → token → lease expiry */
  readonly #slots = new Map<string, Map<string, number>>();
  #operations = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async slidingWindow(request: SlidingWindowRequest): Promise<SlidingWindowResult> {
    return this.slidingWindowSync(request);
  }

  slidingWindowSync(request: SlidingWindowRequest): SlidingWindowResult {
    const now = this.now();
    this.#sweep(now);
    const period = request.periodSeconds * 1000;
    const width = bucketMs(request.periodSeconds);
    let window = this.#windows.get(request.key);
    if (window === undefined) {
      window = { buckets: new Map(), expiresAt: 0 };
      this.#windows.set(request.key, window);
    }
    let used = 0;
    for (const [bucket, entry] of window.buckets) {
      if (entry.last > now - period) used += entry.count;
      else window.buckets.delete(bucket);
    }
    const allowed = request.mode === 'add' || used + request.amount <= request.limit;
    if (allowed && request.mode !== 'check' && request.amount > 0) {
      const bucket = Math.floor(now / width);
      const entry = window.buckets.get(bucket);
      if (entry === undefined) window.buckets.set(bucket, { count: request.amount, last: now });
      else {
        entry.count += request.amount;
        entry.last = now;
      }
      window.expiresAt = now + period;
      used += request.amount;
    }
    const remaining = Math.max(0, request.limit - used);
    if (allowed) return { allowed, used, remaining, retryAfterSeconds: 0 };
    const need = used + request.amount - request.limit;
    let freed = 0;
    let retryMs = period;
    for (const bucket of [...window.buckets.keys()].sort((a, b) => a - b)) {
      const entry = window.buckets.get(bucket)!;
      freed += entry.count;
      if (freed >= need) {
        retryMs = entry.last + period - now;
        break;
      }
    }
    return { allowed, used, remaining, retryAfterSeconds: Math.max(1, Math.ceil(retryMs / 1000)) };
  }

  async quota(request: QuotaRequest): Promise<QuotaResult> {
    const now = this.now();
    this.#sweep(now);
    const { index, endMs } = quotaWindow(now, request.originMs, request.periodSeconds);
    let counter = this.#quotas.get(request.key);
    if (counter === undefined || counter.index !== index) {
      counter = { index, calls: 0, bytes: 0, expiresAt: endMs ?? Number.POSITIVE_INFINITY };
      this.#quotas.set(request.key, counter);
    }
    let exceeded: QuotaResult['exceeded'];
    if (request.mode !== 'add') {
      const calls = request.mode === 'check' ? Math.max(1, request.calls) : request.calls;
      if (request.callLimit !== undefined && counter.calls + calls > request.callLimit) exceeded = 'calls';
      else if (request.kilobyteLimit !== undefined && counter.bytes >= request.kilobyteLimit * 1024)
        exceeded = 'bandwidth';
    }
    if (exceeded === undefined && request.mode !== 'check') {
      counter.calls += request.calls;
      counter.bytes += request.bytes;
    }
    return {
      allowed: exceeded === undefined,
      exceeded,
      calls: counter.calls,
      bytes: counter.bytes,
      renewsInSeconds: endMs === undefined ? undefined : Math.max(1, Math.ceil((endMs - now) / 1000)),
    };
  }

  async acquire(key: string, max: number, leaseSeconds: number): Promise<ConcurrencyLease | undefined> {
    const now = this.now();
    let slots = this.#slots.get(key);
    if (slots === undefined) {
      slots = new Map();
      this.#slots.set(key, slots);
    }
    for (const [token, expiresAt] of slots) if (expiresAt <= now) slots.delete(token);
    if (slots.size >= max) return undefined;
    const token = randomUUID();
    slots.set(token, now + leaseSeconds * 1000);
    return { key, token };
  }

  async release(lease: ConcurrencyLease): Promise<void> {
    const slots = this.#slots.get(lease.key);
    if (slots === undefined) return;
    slots.delete(lease.token);
    if (slots.size === 0) this.#slots.delete(lease.key);
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
      for (const [token, expiresAt] of slots) if (expiresAt <= now) slots.delete(token);
      if (slots.size === 0) this.#slots.delete(key);
    }
  }
}
