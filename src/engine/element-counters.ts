import type { PolicyCounters } from '../policy/index.js';

/** Per element × outcome × reason counts, read by the metrics endpoint. */
export class ElementCounters implements PolicyCounters {
  readonly counts = new Map<string, number>();
  /** element → outcome → reason → key in `counts`, so counting (several times per request) builds no string. */
  readonly #keys = new Map<string, Map<string, Map<string, string>>>();

  count(element: string, outcome: 'allowed' | 'refused' | 'failed', reason = ''): void {
    let byOutcome = this.#keys.get(element);
    if (byOutcome === undefined) {
      byOutcome = new Map();
      this.#keys.set(element, byOutcome);
    }
    let byReason = byOutcome.get(outcome);
    if (byReason === undefined) {
      byReason = new Map();
      byOutcome.set(outcome, byReason);
    }
    let key = byReason.get(reason);
    // Reasons may be unbounded in principle; only the usual small set is remembered.
    if (key === undefined) {
      key = `${element}\u0000${outcome}\u0000${reason}`;
      if (byReason.size < 64) byReason.set(reason, key);
    }
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  get(element: string, outcome: 'allowed' | 'refused' | 'failed', reason = ''): number {
    return this.counts.get(`${element}\u0000${outcome}\u0000${reason}`) ?? 0;
  }

  *entries(): Generator<{ element: string; outcome: string; reason: string; value: number }> {
    for (const [key, value] of this.counts) {
      const [element, outcome, reason] = key.split('\u0000') as [string, string, string];
      yield { element, outcome, reason, value };
    }
  }
}
