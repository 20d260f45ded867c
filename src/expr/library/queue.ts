/**
 * System.Collections.Generic.Queue<T>: first in, first out, enumerated from the head.
 * https://learn.microsoft.com/dotnet/api/system.collections.generic.queue-1
 */
import { equals } from '../runtime/convert.js';
import { CsException, checkSize, defineType, enumerate, prop, type Rt } from '../runtime/core.js';
import { setOut } from './helpers.js';

export class CsQueue {
  readonly items: unknown[] = [];
  /** default(T), what TryXxx leaves in its out argument when there is nothing to take. */
  constructor(readonly empty: unknown) {}
}

const empty = (): CsException => new CsException('InvalidOperationException', 'Queue empty.');

function enqueue(rt: Rt, queue: CsQueue, v: unknown): void {
  checkSize(rt, queue.items.length + 1);
  queue.items.push(v);
}

export const QueueType = defineType({
  name: 'Queue`1',
  namespace: 'System.Collections.Generic',
  aliases: ['Queue'],
  classes: [CsQueue],
  construct: (rt, args, typeArgs) => {
    const queue = new CsQueue(typeArgs[0]?.nullable ? null : (typeArgs[0]?.info.defaultValue ?? null));
    if (args.length === 1 && args[0] !== null && typeof args[0] === 'object') {
      for (const x of enumerate(args[0])) enqueue(rt, queue, x);
    }
    return queue;
  },
  enumerate: (self: CsQueue) => self.items,
  props: { Count: prop((self: CsQueue) => self.items.length) },
  methods: {
    Enqueue: (rt, self: CsQueue, args) => {
      enqueue(rt, self, args[0]);
      return null;
    },
    Dequeue: (_rt, self: CsQueue) => {
      if (self.items.length === 0) throw empty();
      return self.items.shift();
    },
    Peek: (_rt, self: CsQueue) => {
      if (self.items.length === 0) throw empty();
      return self.items[0];
    },
    TryDequeue: (_rt, self: CsQueue, args) => {
      const has = self.items.length > 0;
      setOut(args[0], has ? self.items.shift() : self.empty);
      return has;
    },
    TryPeek: (_rt, self: CsQueue, args) => {
      const has = self.items.length > 0;
      setOut(args[0], has ? self.items[0] : self.empty);
      return has;
    },
    Contains: (_rt, self: CsQueue, args) => self.items.some((x) => equals(x, args[0])),
    Clear: (_rt, self: CsQueue) => {
      self.items.length = 0;
      return null;
    },
    ToArray: (_rt, self: CsQueue) => [...self.items],
  },
});
