/**
 * System.Collections.Generic.Stack<T>: last in, first out, enumerated from the top (the item pushed last comes first).
 * https://learn.microsoft.com/dotnet/api/system.collections.generic.stack-1
 */
import { equals } from '../runtime/convert.js';
import { CsException, checkSize, defineType, enumerate, prop, type Rt } from '../runtime/core.js';
import { setOut } from './helpers.js';

export class CsStack {
  readonly items: unknown[] = [];
  /** default(T), what TryXxx leaves in its out argument when there is nothing to take. */
  constructor(readonly empty: unknown) {}
}

const empty = (): CsException => new CsException('InvalidOperationException', 'Stack empty.');

function push(rt: Rt, stack: CsStack, v: unknown): void {
  checkSize(rt, stack.items.length + 1);
  stack.items.push(v);
}

export const StackType = defineType({
  name: 'Stack`1',
  namespace: 'System.Collections.Generic',
  aliases: ['Stack'],
  classes: [CsStack],
  construct: (rt, args, typeArgs) => {
    const stack = new CsStack(typeArgs[0]?.nullable ? null : (typeArgs[0]?.info.defaultValue ?? null));
    if (args.length === 1 && args[0] !== null && typeof args[0] === 'object') {
      for (const x of enumerate(args[0])) push(rt, stack, x);
    }
    return stack;
  },
  // Items are kept bottom first; .NET enumerates (and ToArray copies) from the top.
  enumerate: (self: CsStack) => [...self.items].reverse(),
  props: { Count: prop((self: CsStack) => self.items.length) },
  methods: {
    Push: (rt, self: CsStack, args) => {
      push(rt, self, args[0]);
      return null;
    },
    Pop: (_rt, self: CsStack) => {
      if (self.items.length === 0) throw empty();
      return self.items.pop();
    },
    Peek: (_rt, self: CsStack) => {
      if (self.items.length === 0) throw empty();
      return self.items[self.items.length - 1];
    },
    TryPop: (_rt, self: CsStack, args) => {
      const has = self.items.length > 0;
      setOut(args[0], has ? self.items.pop() : self.empty);
      return has;
    },
    TryPeek: (_rt, self: CsStack, args) => {
      const has = self.items.length > 0;
      setOut(args[0], has ? self.items[self.items.length - 1] : self.empty);
      return has;
    },
    Contains: (_rt, self: CsStack, args) => self.items.some((x) => equals(x, args[0])),
    Clear: (_rt, self: CsStack) => {
      self.items.length = 0;
      return null;
    },
    ToArray: (_rt, self: CsStack) => [...self.items].reverse(),
  },
});
