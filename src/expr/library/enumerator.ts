/**
 * System.Collections.Generic.IEnumerator<T>: what `GetEnumerator()` of any sequence returns, walked by hand with
 * MoveNext and Current. Each MoveNext costs a step, as a `foreach` iteration does. Current outside the sequence
 * (before the first MoveNext, after the last) is an InvalidOperationException, as an array's enumerator throws.
 * https://learn.microsoft.com/dotnet/api/system.collections.generic.ienumerator-1
 */
import { CsException, defineExtensions, defineType, enumerate, step } from '../runtime/core.js';

export class CsEnumerator {
  #source: unknown;
  #iterator: Iterator<unknown> | null = null;
  #current: unknown;
  /** 'before' the first item, 'on' an item, 'after' the last. */
  #state: 'before' | 'on' | 'after' = 'before';
  constructor(source: unknown) {
    this.#source = source;
  }
  moveNext(): boolean {
    if (this.#state === 'after') return false;
    this.#iterator ??= enumerate(this.#source)[Symbol.iterator]();
    const next = this.#iterator.next();
    if (next.done) {
      this.#state = 'after';
      this.#current = undefined;
      return false;
    }
    this.#state = 'on';
    this.#current = next.value;
    return true;
  }
  get current(): unknown {
    if (this.#state === 'before') {
      throw new CsException('InvalidOperationException', 'Enumeration has not started. Call MoveNext.');
    }
    if (this.#state === 'after') {
      throw new CsException('InvalidOperationException', 'Enumeration already finished.');
    }
    return this.#current;
  }
  reset(): void {
    this.#iterator = null;
    this.#current = undefined;
    this.#state = 'before';
  }
}

export const EnumeratorType = defineType({
  name: 'IEnumerator`1',
  namespace: 'System.Collections.Generic',
  aliases: ['IEnumerator'],
  classes: [CsEnumerator],
  props: {
    Current: { get: (_rt, e: CsEnumerator) => e.current },
  },
  methods: {
    MoveNext: (rt, e: CsEnumerator) => {
      step(rt);
      return e.moveNext();
    },
    Reset: (_rt, e: CsEnumerator) => {
      e.reset();
      return null;
    },
    Dispose: () => null,
  },
});

defineExtensions({
  declaredBy: 'System.Collections.Generic.IEnumerable<T>',
  receiver: 'IEnumerable',
  methods: { GetEnumerator: (_rt, self) => new CsEnumerator(self) },
});
