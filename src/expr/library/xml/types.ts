/**
 * The LINQ to XML container tables: XObject ← XNode ← XContainer ← XElement / XDocument (XAttribute in
 * attribute.ts, the leaf nodes and XDeclaration in leaves.ts), with the members of their .NET API reference
 * (https://learn.microsoft.com/dotnet/api/system.xml.linq) that need no reader, writer, stream or event: Load, Save,
 * CreateReader, WriteTo, ReadFrom, annotations and the Changed/Changing events are left out.
 */
import { toDotNetStringRt } from '../../runtime/convert.js';
import {
  argError,
  checkSize,
  defineType,
  enumerate,
  type Method,
  prop,
  type Rt,
  step,
  typeOf,
} from '../../runtime/core.js';
import { str } from '../helpers.js';
import { XNodeDocumentOrderComparer, XNodeEqualityComparer } from './comparers.js';
import { xmlValueTo } from './conversions.js';
import { toName, toNamespace } from './names.js';
import {
  ancestors,
  attach,
  compareDocumentOrder,
  deepEquals,
  descendantNodes,
  invalidOperation,
  XAttribute,
  XCData,
  XContainer,
  XDeclaration,
  XDocument,
  XElement,
  XML_NAMESPACE,
  XNode,
  XObject,
  XText,
} from './nodes.js';
import { parseXDocument } from './parse.js';
import { bound, inScope, prefixFor, writeXml } from './write.js';

export { parseXDocument };

/** XContainer.GetStringValue: how a value that is not a node becomes text (bool as `true`, as XmlConvert writes). */
export function contentText(rt: Rt, v: unknown): string {
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return toDotNetStringRt(rt, v);
}

/**
 * Content as .NET's Add/AddFirst/ReplaceWith/constructors take it, flattened: nodes and attributes (a copy when they
 * already have a parent), sequences item by item, null skipped, anything else as text.
 */
function flatten(rt: Rt, content: unknown, out: (XNode | XAttribute | string)[]): void {
  if (content === null || content === undefined) return;
  step(rt);
  if (content instanceof XDocument) throw argError('An XObject cannot be used as a value.');
  if (content instanceof XNode) out.push(content.parent ? content.clone() : content);
  else if (content instanceof XAttribute)
    out.push(content.parent ? new XAttribute(content.name, content.value) : content);
  else if (typeof content !== 'string' && typeOf(content).enumerate) {
    for (const item of enumerate(content)) flatten(rt, item, out);
  } else out.push(contentText(rt, content));
  checkSize(rt, out.length);
}

/** Adds content at `at` among the container's nodes; adjacent strings join the text node before them. */
function addContent(rt: Rt, c: XContainer, content: unknown[], at = c.nodes.length): void {
  const items: (XNode | XAttribute | string)[] = [];
  for (const x of content) flatten(rt, x, items);
  let pos = at;
  for (const item of items) {
    if (typeof item === 'string') {
      const before = c.nodes[pos - 1];
      if (before instanceof XText && !(before instanceof XCData)) before.value += item;
      else if (item !== '' || !(c instanceof XElement)) attach(c, new XText(item), pos++);
      else c.emptyString = true;
    } else if (item instanceof XAttribute) attach(c, item);
    else attach(c, item, pos++);
    checkSize(rt, c.nodes.length + (c instanceof XElement ? c.attributes.length : 0));
  }
}

const byName = (name: unknown) => {
  if (name === undefined) return () => true;
  const expanded = toName(name).expanded;
  return (e: XElement) => e.name.expanded === expanded;
};

function siblingsOf(n: XNode): XNode[] {
  if (!n.parent) return [];
  return n.parent.nodes;
}

function saveOptionsIndent(args: unknown[]): boolean {
  return args.length === 0 || toDotNetStringRt(null, args[0]) !== 'DisableFormatting';
}

export const XObjectType = defineType({
  name: 'XObject',
  namespace: 'System.Xml.Linq',
  classes: [XObject],
  props: {
    // No document here was loaded from a URI.
    BaseUri: prop(() => ''),
    Document: prop((o: XObject) => o.document),
    NodeType: prop((o: XObject) => o.nodeType),
    Parent: prop((o: XObject) => o.parentElement),
  },
});

const nodeMethods: Record<string, Method> = {
  AddAfterSelf: (rt, n: XNode, args) => {
    if (!n.parent) throw invalidOperation('The parent is missing.');
    addContent(rt, n.parent, args, n.parent.nodes.indexOf(n) + 1);
    return null;
  },
  AddBeforeSelf: (rt, n: XNode, args) => {
    if (!n.parent) throw invalidOperation('The parent is missing.');
    addContent(rt, n.parent, args, n.parent.nodes.indexOf(n));
    return null;
  },
  Remove: (_rt, n: XNode) => {
    n.remove();
    return null;
  },
  ReplaceWith: (rt, n: XNode, args) => {
    const parent = n.parent;
    if (!parent) throw invalidOperation('The parent is missing.');
    const at = parent.nodes.indexOf(n);
    n.remove();
    addContent(rt, parent, args, at);
    return null;
  },
  Ancestors: (_rt, n: XNode, args) => ancestors(n).filter(byName(args[0])),
  ElementsAfterSelf: (_rt, n: XNode, args) => {
    const s = siblingsOf(n);
    return s
      .slice(s.indexOf(n) + 1)
      .filter((x): x is XElement => x instanceof XElement && byName(args[0])(x));
  },
  ElementsBeforeSelf: (_rt, n: XNode, args) => {
    const s = siblingsOf(n);
    return s
      .slice(0, Math.max(0, s.indexOf(n)))
      .filter((x): x is XElement => x instanceof XElement && byName(args[0])(x));
  },
  NodesAfterSelf: (_rt, n: XNode) => {
    const s = siblingsOf(n);
    return s.slice(s.indexOf(n) + 1);
  },
  NodesBeforeSelf: (_rt, n: XNode) => {
    const s = siblingsOf(n);
    return s.slice(0, Math.max(0, s.indexOf(n)));
  },
  IsAfter: (_rt, n: XNode, args) => compareDocumentOrder(n, args[0] as XNode | null) > 0,
  IsBefore: (_rt, n: XNode, args) => compareDocumentOrder(n, args[0] as XNode | null) < 0,
  ToString: (rt, n: XNode, args) => writeXml(rt, n, saveOptionsIndent(args)),
};

export const XNodeType = defineType({
  name: 'XNode',
  namespace: 'System.Xml.Linq',
  base: XObjectType,
  classes: [XNode],
  props: {
    NextNode: prop((n: XNode) => n.nextNode),
    PreviousNode: prop((n: XNode) => n.previousNode),
  },
  methods: nodeMethods,
  staticProps: {
    DocumentOrderComparer: prop(() => new XNodeDocumentOrderComparer()),
    EqualityComparer: prop(() => new XNodeEqualityComparer()),
  },
  staticMethods: {
    CompareDocumentOrder: (_rt, _s, args) =>
      compareDocumentOrder(args[0] as XNode | null, args[1] as XNode | null),
    DeepEquals: (_rt, _s, args) => deepEquals(args[0] as XNode | null, args[1] as XNode | null),
  },
});

const descendantElements = (rt: Rt, c: XContainer): XElement[] =>
  descendantNodes(c, () => step(rt)).filter((n): n is XElement => n instanceof XElement);

export const XContainerType = defineType({
  name: 'XContainer',
  namespace: 'System.Xml.Linq',
  base: XNodeType,
  classes: [XContainer],
  props: {
    FirstNode: prop((c: XContainer) => c.nodes[0] ?? null),
    LastNode: prop((c: XContainer) => c.nodes[c.nodes.length - 1] ?? null),
  },
  methods: {
    Nodes: (_rt, c: XContainer) => [...c.nodes],
    Elements: (_rt, c: XContainer, args) => c.elements().filter(byName(args[0])),
    Element: (_rt, c: XContainer, args) => c.elements().find(byName(args[0] ?? null)) ?? null,
    Descendants: (rt, c: XContainer, args) => descendantElements(rt, c).filter(byName(args[0])),
    DescendantNodes: (rt, c: XContainer) => descendantNodes(c, () => step(rt)),
    Add: (rt, c: XContainer, args) => {
      addContent(rt, c, args);
      return null;
    },
    AddFirst: (rt, c: XContainer, args) => {
      addContent(rt, c, args, 0);
      return null;
    },
    RemoveNodes: (_rt, c: XContainer) => {
      removeNodes(c);
      return null;
    },
    ReplaceNodes: (rt, c: XContainer, args) => {
      // The new content is read before the old is removed: `e.ReplaceNodes(e.Nodes().Skip(1))` keeps what it names.
      const items: unknown[] = [];
      for (const a of args) flatten(rt, a, items as (XNode | XAttribute | string)[]);
      removeNodes(c);
      addContent(rt, c, items);
      return null;
    },
  },
});

function removeNodes(c: XContainer): void {
  for (const n of c.nodes) n.parent = null;
  c.nodes.length = 0;
  if (c instanceof XElement) c.emptyString = false;
}

function removeAttributes(e: XElement): void {
  for (const a of e.attributes) a.parent = null;
  e.attributes.length = 0;
}

function setAttributeValue(rt: Rt, e: XElement, name: unknown, value: unknown): void {
  const n = toName(name);
  const i = e.attributes.findIndex((a) => a.name.expanded === n.expanded);
  if (value === null || value === undefined) {
    if (i >= 0) e.attributes.splice(i, 1)[0]!.parent = null;
  } else if (i >= 0) e.attributes[i]!.value = contentText(rt, value);
  else attach(e, new XAttribute(n, contentText(rt, value)));
}

function setValue(rt: Rt, e: XElement, value: unknown): void {
  if (value === null || value === undefined)
    throw argError("Value cannot be null. (Parameter 'value')", 'ArgumentNullException');
  removeNodes(e);
  addContent(rt, e, [contentText(rt, value)]);
}

export const XElementType = defineType({
  name: 'XElement',
  namespace: 'System.Xml.Linq',
  base: XContainerType,
  classes: [XElement],
  explicitTo: (e: XElement, target) => xmlValueTo(e.value, target),
  construct: (rt, args) => {
    // new XElement(other) copies the element, with its attributes and nodes.
    if (args.length === 1 && args[0] instanceof XElement) return args[0].clone();
    const el = new XElement(toName(args[0]));
    addContent(rt, el, args.slice(1));
    return el;
  },
  props: {
    Name: {
      get: (_rt, e: XElement) => e.name,
      set: (_rt, e: XElement, v) => {
        e.name = toName(v);
      },
    },
    Value: {
      get: (_rt, e: XElement) => e.value,
      set: (rt, e: XElement, v) => setValue(rt, e, v),
    },
    HasElements: prop((e: XElement) => e.elements().length > 0),
    HasAttributes: prop((e: XElement) => e.attributes.length > 0),
    IsEmpty: prop((e: XElement) => e.isEmpty),
    FirstAttribute: prop((e: XElement) => e.attributes[0] ?? null),
    LastAttribute: prop((e: XElement) => e.attributes[e.attributes.length - 1] ?? null),
  },
  methods: {
    Attribute: (_rt, e: XElement, args) => {
      const expanded = toName(args[0]).expanded;
      return e.attributes.find((a) => a.name.expanded === expanded) ?? null;
    },
    Attributes: (_rt, e: XElement, args) => {
      if (args[0] === undefined) return [...e.attributes];
      const expanded = toName(args[0]).expanded;
      return e.attributes.filter((a) => a.name.expanded === expanded);
    },
    AncestorsAndSelf: (_rt, e: XElement, args) => [e, ...ancestors(e)].filter(byName(args[0])),
    DescendantsAndSelf: (rt, e: XElement, args) => [e, ...descendantElements(rt, e)].filter(byName(args[0])),
    DescendantNodesAndSelf: (rt, e: XElement) => [e, ...descendantNodes(e, () => step(rt))],
    RemoveAll: (_rt, e: XElement) => {
      removeAttributes(e);
      removeNodes(e);
      return null;
    },
    RemoveAttributes: (_rt, e: XElement) => {
      removeAttributes(e);
      return null;
    },
    ReplaceAll: (rt, e: XElement, args) => {
      const items: (XNode | XAttribute | string)[] = [];
      for (const a of args) flatten(rt, a, items);
      removeAttributes(e);
      removeNodes(e);
      addContent(rt, e, items);
      return null;
    },
    ReplaceAttributes: (rt, e: XElement, args) => {
      const items: (XNode | XAttribute | string)[] = [];
      for (const a of args) flatten(rt, a, items);
      removeAttributes(e);
      addContent(rt, e, items);
      return null;
    },
    SetAttributeValue: (rt, e: XElement, args) => {
      setAttributeValue(rt, e, args[0], args[1]);
      return null;
    },
    SetElementValue: (rt, e: XElement, args) => {
      const child = e.elements().find(byName(args[0]));
      if (args[1] === null || args[1] === undefined) child?.remove();
      else if (child) setValue(rt, child, args[1]);
      else {
        const added = new XElement(toName(args[0]));
        addContent(rt, e, [added]);
        setValue(rt, added, args[1]);
      }
      return null;
    },
    SetValue: (rt, e: XElement, args) => {
      setValue(rt, e, args[0]);
      return null;
    },
    // The namespaces the element's declarations and its ancestors' put in scope.
    GetDefaultNamespace: (_rt, e: XElement) => toNamespace(bound(inScope(e), '') ?? ''),
    GetNamespaceOfPrefix: (_rt, e: XElement, args) => {
      const prefix = str(args[0], 'prefix');
      if (prefix === 'xml') return XML_NAMESPACE;
      if (prefix === 'xmlns') return toNamespace('http://www.w3.org/2000/xmlns/');
      const ns = bound(inScope(e), prefix);
      return ns === undefined || prefix === '' ? null : toNamespace(ns);
    },
    GetPrefixOfNamespace: (_rt, e: XElement, args) => {
      const ns = toNamespace(args[0]).uri;
      if (ns === XML_NAMESPACE.uri) return 'xml';
      return prefixFor(inScope(e), ns, false);
    },
  },
  staticProps: { EmptySequence: prop(() => []) },
  staticMethods: { Parse: (_rt, _s, args) => parseXDocument(str(args[0], 'text')).root },
});

export const XDocumentTypeInfo = defineType({
  name: 'XDocument',
  namespace: 'System.Xml.Linq',
  base: XContainerType,
  classes: [XDocument],
  construct: (rt, args) => {
    // new XDocument(other) copies the document; otherwise an optional XDeclaration, then content.
    if (args.length === 1 && args[0] instanceof XDocument) return args[0].clone();
    const d = new XDocument();
    const content = args[0] instanceof XDeclaration ? args.slice(1) : args;
    if (args[0] instanceof XDeclaration) d.declaration = args[0];
    addContent(rt, d, content);
    return d;
  },
  props: {
    Root: prop((d: XDocument) => d.root),
    DocumentType: prop((d: XDocument) => d.documentType),
    Declaration: {
      get: (_rt, d: XDocument) => d.declaration,
      set: (_rt, d: XDocument, v) => {
        d.declaration = v instanceof XDeclaration ? v : null;
      },
    },
  },
  staticMethods: { Parse: (_rt, _s, args) => parseXDocument(str(args[0], 'text')) },
});
