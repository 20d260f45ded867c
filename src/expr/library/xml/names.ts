/**
 * XName and XNamespace, and System.Xml.XmlNodeType. .NET atomizes names and namespaces, so `==` compares them by
 * value here, a string converts to either implicitly (`XNamespace ns = "urn:x"`, `el.Name == "a"`), and
 * `ns + "local"` is the name in that namespace (XNamespace's `operator +`).
 * https://learn.microsoft.com/dotnet/api/system.xml.linq.xnamespace, .xname
 */
import { toDotNetStringRt } from '../../runtime/convert.js';
import { argError, CsException, defineType, invalidCast, prop, typeName } from '../../runtime/core.js';
import { defineEnumType } from '../enums.js';
import { str } from '../helpers.js';
import { NO_NAMESPACE, XML_NAMESPACE, XMLNS_NAMESPACE, XmlNodeTypeEnum, XName, XNamespace } from './nodes.js';

defineEnumType(XmlNodeTypeEnum, 'System.Xml');

/** An XName from an XName or a string in expanded form (`{urn:x}local`), as the implicit conversion reads it. */
export function toName(v: unknown): XName {
  if (v instanceof XName) return v;
  if (v === null || v === undefined)
    throw argError("Value cannot be null. (Parameter 'name')", 'ArgumentNullException');
  const s = str(v, 'name');
  const m = /^\{(.*)\}(.+)$/.exec(s);
  return m ? new XName(localName(m[2]!), m[1]!) : new XName(localName(s), '');
}

/** A local name XmlConvert.VerifyNCName would take (in part: no empty name, whitespace or markup characters). */
function localName(s: string): string {
  if (!s || /[\s<>{}"'&=/]/.test(s))
    throw new CsException('XmlException', `The name '${s}' is not a valid XML name.`);
  return s;
}

export function toNamespace(v: unknown): XNamespace {
  if (v instanceof XNamespace) return v;
  if (v === null || v === undefined) {
    throw argError("Value cannot be null. (Parameter 'namespaceName')", 'ArgumentNullException');
  }
  const uri = str(v, 'namespaceName');
  if (uri === '') return NO_NAMESPACE;
  if (uri === XML_NAMESPACE.uri) return XML_NAMESPACE;
  if (uri === XMLNS_NAMESPACE.uri) return XMLNS_NAMESPACE;
  return new XNamespace(uri);
}

export const XNameType = defineType({
  name: 'XName',
  namespace: 'System.Xml.Linq',
  classes: [XName],
  convert: (v) => {
    if (v instanceof XName || typeof v === 'string') return toName(v);
    throw invalidCast(typeName(v), 'System.Xml.Linq.XName');
  },
  valueEquals: (self: XName, other) =>
    (other instanceof XName || typeof other === 'string') && self.expanded === toName(other).expanded,
  props: {
    LocalName: prop((n: XName) => n.localName),
    NamespaceName: prop((n: XName) => n.namespace),
    Namespace: prop((n: XName) => toNamespace(n.namespace)),
  },
  methods: {
    ToString: (_rt, n: XName) => n.expanded,
    Equals: (_rt, n: XName, args) => args[0] instanceof XName && args[0].expanded === n.expanded,
  },
  staticMethods: {
    Get: (_rt, _s, args) => toName(args.length > 1 ? `{${str(args[1])}}${str(args[0])}` : args[0]),
  },
});

export const XNamespaceType = defineType({
  name: 'XNamespace',
  namespace: 'System.Xml.Linq',
  classes: [XNamespace],
  convert: (v) => {
    if (v instanceof XNamespace || typeof v === 'string') return toNamespace(v);
    throw invalidCast(typeName(v), 'System.Xml.Linq.XNamespace');
  },
  valueEquals: (self: XNamespace, other) =>
    (other instanceof XNamespace || typeof other === 'string') && self.uri === toNamespace(other).uri,
  plus: (rt, self: XNamespace, right) => new XName(localName(toDotNetStringRt(rt, right)), self.uri),
  props: { NamespaceName: prop((n: XNamespace) => n.uri) },
  methods: {
    GetName: (_rt, n: XNamespace, args) => new XName(localName(str(args[0], 'localName')), n.uri),
    ToString: (_rt, n: XNamespace) => n.uri,
    Equals: (_rt, n: XNamespace, args) => args[0] instanceof XNamespace && args[0].uri === n.uri,
  },
  staticProps: {
    None: prop(() => NO_NAMESPACE),
    Xml: prop(() => XML_NAMESPACE),
    Xmlns: prop(() => XMLNS_NAMESPACE),
  },
  staticMethods: { Get: (_rt, _s, args) => toNamespace(args[0]) },
});
