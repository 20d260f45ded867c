/**
 * LINQ to XML's object model, as System.Xml.Linq shapes it: XObject ← XNode ← XContainer ← XElement / XDocument, the
 * leaf nodes (XText ← XCData, XComment, XProcessingInstruction, XDocumentType), XAttribute (an XObject, not a node),
 * and the atoms XName and XNamespace. Tree rules kept from .NET: a node has at most one parent (adding a node that
 * has one adds a deep copy), `Parent` is the parent element (null under a document), adjacent added strings merge
 * into one text node. The type tables that expose these to expressions are in types.ts.
 */
import { CsException } from '../../runtime/core.js';
import { type CsEnum, makeEnum } from '../../runtime/enum.js';

/** System.Xml.XmlNodeType, https://learn.microsoft.com/dotnet/api/system.xml.xmlnodetype */
export const XmlNodeTypeEnum = makeEnum('XmlNodeType', {
  None: 0,
  Element: 1,
  Attribute: 2,
  Text: 3,
  CDATA: 4,
  EntityReference: 5,
  Entity: 6,
  ProcessingInstruction: 7,
  Comment: 8,
  Document: 9,
  DocumentType: 10,
  DocumentFragment: 11,
  Notation: 12,
  Whitespace: 13,
  SignificantWhitespace: 14,
  EndElement: 15,
  EndEntity: 16,
  XmlDeclaration: 17,
});
export const nodeType = (name: keyof typeof XmlNodeTypeEnum.members): CsEnum =>
  XmlNodeTypeEnum.values.get(name)!;

export const invalidOperation = (message: string): CsException =>
  new CsException('InvalidOperationException', message);

export class XNamespace {
  constructor(readonly uri: string) {}
}
export const NO_NAMESPACE = new XNamespace('');
export const XML_NAMESPACE = new XNamespace('http://www.w3.org/XML/1998/namespace');
export const XMLNS_NAMESPACE = new XNamespace('http://www.w3.org/2000/xmlns/');

export class XName {
  constructor(
    readonly localName: string,
    readonly namespace: string,
  ) {}
  get expanded(): string {
    return this.namespace ? `{${this.namespace}}${this.localName}` : this.localName;
  }
}

export abstract class XObject {
  /** The element or document holding this object. */
  parent: XContainer | null = null;
  abstract get nodeType(): CsEnum;
  get document(): XDocument | null {
    let o: XObject | null = this;
    while (o && !(o instanceof XDocument)) o = o.parent;
    return o;
  }
  /** XObject.Parent: the parent element; null for an object directly under a document. */
  get parentElement(): XElement | null {
    return this.parent instanceof XElement ? this.parent : null;
  }
}

export abstract class XNode extends XObject {
  abstract clone(): XNode;
  remove(): void {
    if (!this.parent) throw invalidOperation('The parent is missing.');
    this.parent.nodes.splice(this.parent.nodes.indexOf(this), 1);
    // The last node gone, an element holds nothing (not the empty string): `<a />`, as .NET writes it.
    if (this.parent instanceof XElement) this.parent.emptyString = false;
    this.parent = null;
  }
  get nextNode(): XNode | null {
    if (!this.parent) return null;
    const siblings = this.parent.nodes;
    return siblings[siblings.indexOf(this) + 1] ?? null;
  }
  get previousNode(): XNode | null {
    if (!this.parent) return null;
    const siblings = this.parent.nodes;
    return siblings[siblings.indexOf(this) - 1] ?? null;
  }
}

export abstract class XContainer extends XNode {
  readonly nodes: XNode[] = [];
  elements(): XElement[] {
    return this.nodes.filter((n): n is XElement => n instanceof XElement);
  }
}

export class XAttribute extends XObject {
  constructor(
    readonly name: XName,
    public value: string,
  ) {
    super();
  }
  get nodeType(): CsEnum {
    return nodeType('Attribute');
  }
  get isNamespaceDeclaration(): boolean {
    return (
      this.name.namespace === XMLNS_NAMESPACE.uri ||
      (this.name.namespace === '' && this.name.localName === 'xmlns')
    );
  }
}

export class XText extends XNode {
  constructor(public value: string) {
    super();
  }
  get nodeType(): CsEnum {
    return nodeType('Text');
  }
  clone(): XText {
    return new XText(this.value);
  }
}

export class XCData extends XText {
  override get nodeType(): CsEnum {
    return nodeType('CDATA');
  }
  override clone(): XCData {
    return new XCData(this.value);
  }
}

export class XComment extends XNode {
  constructor(public value: string) {
    super();
  }
  get nodeType(): CsEnum {
    return nodeType('Comment');
  }
  clone(): XComment {
    return new XComment(this.value);
  }
}

export class XProcessingInstruction extends XNode {
  constructor(
    public target: string,
    public data: string,
  ) {
    super();
  }
  get nodeType(): CsEnum {
    return nodeType('ProcessingInstruction');
  }
  clone(): XProcessingInstruction {
    return new XProcessingInstruction(this.target, this.data);
  }
}

export class XDocumentType extends XNode {
  constructor(
    public name: string,
    public publicId: string | null,
    public systemId: string | null,
    public internalSubset: string | null,
  ) {
    super();
  }
  get nodeType(): CsEnum {
    return nodeType('DocumentType');
  }
  clone(): XDocumentType {
    return new XDocumentType(this.name, this.publicId, this.systemId, this.internalSubset);
  }
}

/** Not a node: a document's `<?xml …?>`, kept apart from its nodes as .NET does. */
export class XDeclaration {
  constructor(
    public version: string | null,
    public encoding: string | null,
    public standalone: string | null,
  ) {}
}

export class XElement extends XContainer {
  readonly attributes: XAttribute[] = [];
  /**
   * Without nodes, whether the element holds the empty string (written `<a></a>`, IsEmpty false: parsed from an end
   * tag, or Value set to "") rather than nothing (`<a />`, IsEmpty true), as .NET tells the two apart.
   */
  emptyString = false;
  constructor(public name: XName) {
    super();
  }
  get isEmpty(): boolean {
    return this.nodes.length === 0 && !this.emptyString;
  }
  get nodeType(): CsEnum {
    return nodeType('Element');
  }
  /** The text of every descendant text and CDATA node, in document order (comments and instructions left out). */
  get value(): string {
    const parts: string[] = [];
    const walk = (c: XContainer): void => {
      for (const n of c.nodes) {
        if (n instanceof XText) parts.push(n.value);
        else if (n instanceof XElement) walk(n);
      }
    };
    walk(this);
    return parts.join('');
  }
  clone(): XElement {
    const copy = new XElement(this.name);
    copy.emptyString = this.emptyString;
    for (const a of this.attributes) attach(copy, new XAttribute(a.name, a.value));
    for (const n of this.nodes) attach(copy, n.clone());
    return copy;
  }
}

export class XDocument extends XContainer {
  declaration: XDeclaration | null = null;
  get nodeType(): CsEnum {
    return nodeType('Document');
  }
  get root(): XElement | null {
    return this.elements()[0] ?? null;
  }
  get documentType(): XDocumentType | null {
    return this.nodes.find((n): n is XDocumentType => n instanceof XDocumentType) ?? null;
  }
  clone(): XDocument {
    const copy = new XDocument();
    copy.declaration = this.declaration;
    for (const n of this.nodes) attach(copy, n.clone());
    return copy;
  }
}

/** Puts a parentless object into a container, at `at` among its nodes (the end by default). */
export function attach(container: XContainer, o: XNode | XAttribute, at = container.nodes.length): void {
  if (o instanceof XAttribute) {
    if (!(container instanceof XElement)) throw argumentError('An attribute cannot be added to a document.');
    if (container.attributes.some((a) => a.name.expanded === o.name.expanded)) {
      throw invalidOperation('Duplicate attribute.');
    }
    container.attributes.push(o);
  } else {
    if (container instanceof XDocument) checkDocumentContent(container, o);
    container.nodes.splice(at, 0, o);
  }
  o.parent = container;
}

const argumentError = (message: string): CsException => new CsException('ArgumentException', message);

/** XDocument's own rules: one root element, one document type before it, no text but whitespace. */
function checkDocumentContent(doc: XDocument, n: XNode): void {
  if (n instanceof XElement && doc.root)
    throw invalidOperation('This operation would create an incorrectly structured document.');
  if (n instanceof XDocumentType && (doc.documentType || doc.root)) {
    throw invalidOperation('This operation would create an incorrectly structured document.');
  }
  if (n instanceof XText && (n instanceof XCData || n.value.trim() !== '')) {
    throw argumentError('Non-whitespace characters cannot be added to content.');
  }
}

/** The element ancestors of a node or attribute, nearest first. */
export function ancestors(o: XObject): XElement[] {
  const out: XElement[] = [];
  for (let p = o.parentElement; p; p = p.parentElement) out.push(p);
  return out;
}

/** Every node below a container in document order; `onNode` runs per node so a huge tree costs its steps. */
export function descendantNodes(c: XContainer, onNode: () => void = () => {}): XNode[] {
  const out: XNode[] = [];
  // A loop over a stack of [container, next index], not recursion: a deeply nested body must not exhaust the stack.
  const stack: [XContainer, number][] = [[c, 0]];
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    const n = top[0].nodes[top[1]++];
    if (!n) {
      stack.pop();
      continue;
    }
    onNode();
    out.push(n);
    if (n instanceof XContainer) stack.push([n, 0]);
  }
  return out;
}

/** XNode.CompareDocumentOrder: -1, 0 or 1; nodes in different trees have no order. */
export function compareDocumentOrder(a: XNode | null, b: XNode | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  const path = (n: XNode): XNode[] => {
    const p: XNode[] = [n];
    for (let c = n.parent; c; c = c.parent) p.unshift(c);
    return p;
  };
  const pa = path(a);
  const pb = path(b);
  if (pa[0] !== pb[0]) throw invalidOperation('A common ancestor is missing.');
  let i = 0;
  while (i < pa.length && i < pb.length && pa[i] === pb[i]) i++;
  // One is an ancestor of the other: the ancestor comes first.
  if (i === pa.length) return -1;
  if (i === pb.length) return 1;
  const siblings = (pa[i - 1] as XContainer).nodes;
  return siblings.indexOf(pa[i]!) < siblings.indexOf(pb[i]!) ? -1 : 1;
}

/**
 * XNode.DeepEquals, by the rules of its documentation: nodes of different types differ; elements are equal with the
 * same name, the same attributes (names and values, in order) and equal content nodes, comments and processing
 * instructions left out; documents by their nodes, the same way.
 */
export function deepEquals(a: XNode | null, b: XNode | null): boolean {
  if (a === b) return true;
  if (a === null || b === null || a.nodeType !== b.nodeType) return false;
  if (a instanceof XText) return a.value === (b as XText).value;
  if (a instanceof XComment) return a.value === (b as XComment).value;
  if (a instanceof XProcessingInstruction) {
    const o = b as XProcessingInstruction;
    return a.target === o.target && a.data === o.data;
  }
  if (a instanceof XDocumentType) {
    const o = b as XDocumentType;
    return (
      a.name === o.name &&
      a.publicId === o.publicId &&
      a.systemId === o.systemId &&
      (a.internalSubset ?? '') === (o.internalSubset ?? '')
    );
  }
  if (a instanceof XElement) {
    const o = b as XElement;
    if (a.name.expanded !== o.name.expanded || a.attributes.length !== o.attributes.length) return false;
    const sameAttributes = a.attributes.every(
      (x, i) => x.name.expanded === o.attributes[i]!.name.expanded && x.value === o.attributes[i]!.value,
    );
    if (!sameAttributes) return false;
  }
  const content = (c: XContainer): XNode[] =>
    c.nodes.filter((n) => !(n instanceof XComment || n instanceof XProcessingInstruction));
  const ca = content(a as XContainer);
  const cb = content(b as XContainer);
  return ca.length === cb.length && ca.every((n, i) => deepEquals(n, cb[i]!));
}

/** A string two nodes share exactly when deepEquals holds for them (XNodeEqualityComparer's key and hash). */
export function deepKey(n: XNode): string {
  if (n instanceof XText) return `${n.nodeType.value}${JSON.stringify(n.value)}`;
  if (n instanceof XComment) return `c${JSON.stringify(n.value)}`;
  if (n instanceof XProcessingInstruction) return `p${JSON.stringify([n.target, n.data])}`;
  if (n instanceof XDocumentType) {
    return `t${JSON.stringify([n.name, n.publicId, n.systemId, n.internalSubset ?? ''])}`;
  }
  const c = n as XContainer;
  const head =
    c instanceof XElement
      ? `e${JSON.stringify([c.name.expanded, ...c.attributes.flatMap((a) => [a.name.expanded, a.value])])}`
      : 'd';
  const content = c.nodes.filter((k) => !(k instanceof XComment || k instanceof XProcessingInstruction));
  return `${head}(${content.map(deepKey).join(',')})`;
}

export const isXmlWhitespace = (s: string): boolean => /^[ \t\r\n]*$/.test(s);
