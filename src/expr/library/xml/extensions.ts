/**
 * System.Xml.Linq.Extensions: the LINQ to XML axes on sequences of nodes (`doc.Descendants("item").Attributes("id")`,
 * `elements.Remove()`), as extension methods of every IEnumerable. Results come in the order .NET yields them:
 * source item by source item. Calling one on a sequence of something else is an InvalidCastException, as the cast
 * .NET's overload resolution would have refused.
 * https://learn.microsoft.com/dotnet/api/system.xml.linq.extensions
 */
import {
  defineExtensions,
  defineType,
  enumerate,
  invalidCast,
  type Method,
  type Rt,
  step,
  typeName,
} from '../../runtime/core.js';
import { flattenCounted } from '../helpers.js';
import { toName } from './names.js';
import {
  ancestors,
  compareDocumentOrder,
  descendantNodes,
  invalidOperation,
  XAttribute,
  XContainer,
  XElement,
  XNode,
} from './nodes.js';

type Item = abstract new (...args: never[]) => unknown;

/** The source's items, each checked to be a `T` (null items are skipped, as .NET's axes skip them). */
function source<T>(rt: Rt, self: unknown, type: Item & { prototype: T }, typeLabel: string): T[] {
  const out: T[] = [];
  for (const x of enumerate(self)) {
    step(rt);
    if (x === null || x === undefined) continue;
    if (!(x instanceof type)) throw invalidCast(typeName(x), typeLabel);
    out.push(x as T);
  }
  return out;
}

const nameFilter = (name: unknown) => {
  if (name === undefined) return () => true;
  const expanded = toName(name).expanded;
  return (e: XElement) => e.name.expanded === expanded;
};

const elementsOf = (rt: Rt, c: XContainer): XElement[] =>
  descendantNodes(c, () => step(rt)).filter((n): n is XElement => n instanceof XElement);

const NODE = 'System.Xml.Linq.XNode';
const CONTAINER = 'System.Xml.Linq.XContainer';
const ELEMENT = 'System.Xml.Linq.XElement';

const methods: Record<string, Method> = {
  Ancestors: (rt, self, args) => {
    const f = nameFilter(args[0]);
    return flattenCounted(
      rt,
      source(rt, self, XNode, NODE).map((n) => ancestors(n).filter(f)),
    );
  },
  AncestorsAndSelf: (rt, self, args) => {
    const f = nameFilter(args[0]);
    return flattenCounted(
      rt,
      source(rt, self, XElement, ELEMENT).map((e) => [e, ...ancestors(e)].filter(f)),
    );
  },
  Attributes: (rt, self, args) => {
    const expanded = args[0] === undefined ? null : toName(args[0]).expanded;
    return flattenCounted(
      rt,
      source(rt, self, XElement, ELEMENT).map((e) =>
        expanded === null ? [...e.attributes] : e.attributes.filter((a) => a.name.expanded === expanded),
      ),
    );
  },
  DescendantNodes: (rt, self) =>
    flattenCounted(
      rt,
      source(rt, self, XContainer, CONTAINER).map((c) => descendantNodes(c, () => step(rt))),
    ),
  DescendantNodesAndSelf: (rt, self) =>
    flattenCounted(
      rt,
      source(rt, self, XElement, ELEMENT).map((e) => [e, ...descendantNodes(e, () => step(rt))]),
    ),
  Descendants: (rt, self, args) => {
    const f = nameFilter(args[0]);
    return flattenCounted(
      rt,
      source(rt, self, XContainer, CONTAINER).map((c) => elementsOf(rt, c).filter(f)),
    );
  },
  DescendantsAndSelf: (rt, self, args) => {
    const f = nameFilter(args[0]);
    return flattenCounted(
      rt,
      source(rt, self, XElement, ELEMENT).map((e) => [e, ...elementsOf(rt, e)].filter(f)),
    );
  },
  Elements: (rt, self, args) => {
    const f = nameFilter(args[0]);
    return flattenCounted(
      rt,
      source(rt, self, XContainer, CONTAINER).map((c) => c.elements().filter(f)),
    );
  },
  InDocumentOrder: (rt, self) => {
    const nodes = source(rt, self, XNode, NODE);
    step(rt, nodes.length);
    // Array.prototype.sort is stable and the comparison is consistent within one tree.
    return [...nodes].sort(compareDocumentOrder);
  },
  Nodes: (rt, self) =>
    flattenCounted(
      rt,
      source(rt, self, XContainer, CONTAINER).map((c) => [...c.nodes]),
    ),
  /**
   * Removes every node or attribute of the sequence from its parent, over a copy of the sequence (so
   * `doc.Descendants("x").Remove()` removes them all); one without a parent throws, as XNode.Remove does.
   */
  Remove: (rt, self) => {
    for (const x of [...enumerate(self)]) {
      step(rt);
      if (x === null || x === undefined) continue;
      if (x instanceof XAttribute) {
        const e = x.parent;
        if (!(e instanceof XElement)) throw invalidOperation('The parent is missing.');
        e.attributes.splice(e.attributes.indexOf(x), 1);
        x.parent = null;
      } else if (x instanceof XNode) x.remove();
      else throw invalidCast(typeName(x), NODE);
    }
    return null;
  },
};

defineExtensions({
  declaredBy: 'System.Xml.Linq.Extensions',
  receiver: 'IEnumerable',
  itemClass: XNode,
  methods,
});

/** The static class, for the static call form: `Extensions.Elements(items)` is written qualified, since
 *  Newtonsoft.Json.Linq has an Extensions class too. */
export const XmlExtensionsType = defineType({
  name: 'System.Xml.Linq.Extensions',
  staticMethods: Object.fromEntries(
    Object.entries(methods).map(([k, m]) => [
      k,
      ((rt, _s, args, typeArgs) => m(rt, args[0], args.slice(1), typeArgs)) as Method,
    ]),
  ),
});
