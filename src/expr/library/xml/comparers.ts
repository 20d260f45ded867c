/**
 * XNodeEqualityComparer and XNodeDocumentOrderComparer: IEqualityComparer<XNode> by XNode.DeepEquals and IComparer<XNode>
 * by XNode.CompareDocumentOrder. Both are comparers LINQ and the collections take (`Distinct(new
 * XNodeEqualityComparer())`, `OrderBy(n => n, XNode.DocumentOrderComparer)`).
 * https://learn.microsoft.com/dotnet/api/system.xml.linq.xnodeequalitycomparer, .xnodedocumentordercomparer
 */
import { defineType } from '../../runtime/core.js';
import { hashString } from '../helpers.js';
import { CsComparer, StringComparison } from '../string.js';
import { compareDocumentOrder, deepEquals, deepKey, XNode } from './nodes.js';

const nodeOrNull = (v: unknown): XNode | null => (v ?? null) as XNode | null;

export class XNodeEqualityComparer extends CsComparer {
  constructor() {
    super(StringComparison.members.Ordinal);
  }
  override key(v: unknown): unknown {
    return v instanceof XNode ? `\u0000xml${deepKey(v)}` : v;
  }
}

export class XNodeDocumentOrderComparer extends CsComparer {
  constructor() {
    super(StringComparison.members.Ordinal);
  }
  override order(a: unknown, b: unknown): number {
    return compareDocumentOrder(nodeOrNull(a), nodeOrNull(b));
  }
}

export const XNodeEqualityComparerType = defineType({
  name: 'XNodeEqualityComparer',
  namespace: 'System.Xml.Linq',
  classes: [XNodeEqualityComparer],
  construct: () => new XNodeEqualityComparer(),
  methods: {
    Equals: (_rt, c: XNodeEqualityComparer, args) =>
      args.length === 1 ? args[0] === c : deepEquals(nodeOrNull(args[0]), nodeOrNull(args[1])),
    GetHashCode: (_rt, _c, args) => (args[0] instanceof XNode ? hashString(deepKey(args[0])) : 0),
  },
});

export const XNodeDocumentOrderComparerType = defineType({
  name: 'XNodeDocumentOrderComparer',
  namespace: 'System.Xml.Linq',
  classes: [XNodeDocumentOrderComparer],
  construct: () => new XNodeDocumentOrderComparer(),
  methods: {
    Compare: (_rt, _c, args) => compareDocumentOrder(nodeOrNull(args[0]), nodeOrNull(args[1])),
  },
});
