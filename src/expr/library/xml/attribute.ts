/**
 * XAttribute: an XObject (not a node) with a name and a value; a namespace declaration (`xmlns:p`, `xmlns`) is one
 * too, as .NET keeps them. https://learn.microsoft.com/dotnet/api/system.xml.linq.xattribute
 */
import { argError, defineType, prop } from '../../runtime/core.js';
import { xmlValueTo } from './conversions.js';
import { toName } from './names.js';
import { invalidOperation, XAttribute, XElement, XML_NAMESPACE } from './nodes.js';
import { contentText, XObjectType } from './types.js';
import { escAttr } from './write.js';

export const XAttributeType = defineType({
  name: 'XAttribute',
  namespace: 'System.Xml.Linq',
  base: XObjectType,
  classes: [XAttribute],
  explicitTo: (a: XAttribute, target) => xmlValueTo(a.value, target),
  construct: (rt, args) => {
    if (args.length === 1 && args[0] instanceof XAttribute)
      return new XAttribute(args[0].name, args[0].value);
    if (args[1] === null || args[1] === undefined) {
      throw argError("Value cannot be null. (Parameter 'value')", 'ArgumentNullException');
    }
    return new XAttribute(toName(args[0]), contentText(rt, args[1]));
  },
  props: {
    Name: prop((a: XAttribute) => a.name),
    Value: {
      get: (_rt, a: XAttribute) => a.value,
      set: (rt, a: XAttribute, v) => {
        a.value = contentText(rt, v);
      },
    },
    IsNamespaceDeclaration: prop((a: XAttribute) => a.isNamespaceDeclaration),
    NextAttribute: prop((a: XAttribute) => sibling(a, 1)),
    PreviousAttribute: prop((a: XAttribute) => sibling(a, -1)),
  },
  methods: {
    Remove: (_rt, a: XAttribute) => {
      const e = a.parent;
      if (!(e instanceof XElement)) throw invalidOperation('The parent is missing.');
      e.attributes.splice(e.attributes.indexOf(a), 1);
      a.parent = null;
      return null;
    },
    SetValue: (rt, a: XAttribute, args) => {
      if (args[0] === null || args[0] === undefined) {
        throw argError("Value cannot be null. (Parameter 'value')", 'ArgumentNullException');
      }
      a.value = contentText(rt, args[0]);
      return null;
    },
    ToString: (_rt, a: XAttribute) => `${attributeName(a)}="${escAttr(a.value)}"`,
  },
  staticProps: { EmptySequence: prop(() => []) },
});

/** The attribute's name as written: `xmlns:p` and `xmlns` for declarations, `xml:` for the XML namespace. */
function attributeName(a: XAttribute): string {
  if (a.isNamespaceDeclaration) return a.name.namespace ? `xmlns:${a.name.localName}` : 'xmlns';
  return a.name.namespace === XML_NAMESPACE.uri ? `xml:${a.name.localName}` : a.name.localName;
}

function sibling(a: XAttribute, delta: number): XAttribute | null {
  const e = a.parent;
  if (!(e instanceof XElement)) return null;
  return e.attributes[e.attributes.indexOf(a) + delta] ?? null;
}
