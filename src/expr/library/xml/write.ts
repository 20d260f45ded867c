/**
 * ToString of LINQ to XML nodes as XmlWriter writes them with SaveOptions.None (indented by two spaces, no
 * declaration) or DisableFormatting: an element holding text (mixed content) is written inline with everything
 * below it, as XmlWriter stops indenting there; an empty element is `<a />`.
 */
import { BoundedText, type Rt } from '../../runtime/core.js';
import {
  XCData,
  XComment,
  XDocument,
  XDocumentType,
  XElement,
  XML_NAMESPACE,
  type XNode,
  XProcessingInstruction,
  XText,
} from './nodes.js';

export const escText = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
export const escAttr = (s: string): string =>
  escText(s).replace(/"/g, '&quot;').replace(/\r/g, '&#xD;').replace(/\n/g, '&#xA;').replace(/\t/g, '&#x9;');

/** XML text of a node; with `rt`, the output is counted as it is written and the string limit raised on the way. */
export function writeXml(rt: Rt | null, node: XNode, indent: boolean): string {
  const out = new BoundedText(rt);
  if (node instanceof XDocument) {
    node.nodes.forEach((n, i) => {
      if (i > 0 && indent) out.add('\n');
      writeNode(out, n, indent, 0);
    });
  } else writeNode(out, node, indent, 0);
  return out.toString();
}

export function documentTypeText(d: XDocumentType): string {
  let s = `<!DOCTYPE ${d.name}`;
  if (d.publicId !== null) s += ` PUBLIC "${d.publicId}" "${d.systemId ?? ''}"`;
  else if (d.systemId !== null) s += ` SYSTEM "${d.systemId}"`;
  else s += ' ';
  if (d.internalSubset) s += `[${d.internalSubset}]`;
  return `${s}>`;
}

/** A leaf node's text; elements are written by writeElement. */
function leafText(n: XNode): string {
  if (n instanceof XCData) return `<![CDATA[${n.value.replace(/]]>/g, ']]]]><![CDATA[>')}]]>`;
  if (n instanceof XText) return escText(n.value);
  if (n instanceof XComment) return `<!--${n.value}-->`;
  if (n instanceof XProcessingInstruction) return `<?${n.target}${n.data ? ` ${n.data}` : ''}?>`;
  if (n instanceof XDocumentType) return documentTypeText(n);
  return '';
}

function writeNode(
  out: BoundedText,
  n: XNode,
  indent: boolean,
  level: number,
  scope?: { tree: Bindings; written: Bindings },
): void {
  if (n instanceof XElement) writeElement(out, n, indent, level, scope);
  else out.add(`${indent ? '  '.repeat(level) : ''}${leafText(n)}`);
}

/** Prefix bindings in force, nearest last: [prefix ('' for the default namespace), namespace]. */
export type Bindings = readonly (readonly [string, string])[];

function declarationsOf(el: XElement): [string, string][] {
  return el.attributes
    .filter((a) => a.isNamespaceDeclaration)
    .map((a) => [a.name.namespace ? a.name.localName : '', a.value]);
}

/** The namespace a prefix stands for (the default namespace is '' unless declared). */
export function bound(bindings: Bindings, prefix: string): string | undefined {
  for (let i = bindings.length - 1; i >= 0; i--) if (bindings[i]![0] === prefix) return bindings[i]![1];
  return prefix === '' ? '' : undefined;
}

/** The nearest prefix bound to a namespace and not rebound closer; '' (default) only for element names. */
export function prefixFor(bindings: Bindings, ns: string, allowDefault: boolean): string | null {
  const seen = new Set<string>();
  for (let i = bindings.length - 1; i >= 0; i--) {
    const [prefix, uri] = bindings[i]!;
    if (seen.has(prefix)) continue;
    seen.add(prefix);
    if (uri === ns && (allowDefault || prefix !== '')) return prefix;
  }
  return null;
}

/** The declarations of an element's ancestors, the root's first: what its prefixes may refer to. */
function ancestorBindings(el: XElement): Bindings {
  const chain: XElement[] = [];
  for (let p = el.parent; p instanceof XElement; p = p.parent) chain.unshift(p);
  return chain.flatMap(declarationsOf);
}

/** Every prefix binding in force at an element: its ancestors' declarations, then its own. */
export function inScope(el: XElement): Bindings {
  return [...ancestorBindings(el), ...declarationsOf(el)];
}

/**
 * The start tag's name and attributes. Prefixes are the ones the tree declares (`xmlns:soap` read from the body is
 * kept as an attribute, as .NET keeps it); a namespace no prefix is declared for becomes the default namespace of an
 * element, or a p1, p2, … prefix of an attribute, as XmlWriter invents; a declaration the text written so far lacks
 * (writing an inner element on its own) is added.
 */
function startTag(
  el: XElement,
  tree: Bindings,
  written: Bindings,
): { text: string; tree: Bindings; written: Bindings } {
  const own = declarationsOf(el);
  const treeHere = [...tree, ...own];
  const writtenHere = [...written, ...own];
  let added = '';
  const declare = (prefix: string, ns: string): void => {
    added += prefix ? ` xmlns:${prefix}="${escAttr(ns)}"` : ` xmlns="${escAttr(ns)}"`;
    writtenHere.push([prefix, ns]);
  };
  const ns = el.name.namespace;
  let prefix = '';
  if (!ns) {
    if (bound(writtenHere, '') !== '') declare('', '');
  } else {
    prefix = prefixFor(treeHere, ns, true) ?? '';
    if (bound(writtenHere, prefix) !== ns) declare(prefix, ns);
  }
  let generated = 0;
  const attrs = el.attributes.map((a) => {
    const value = `="${escAttr(a.value)}"`;
    if (a.isNamespaceDeclaration)
      return ` ${a.name.namespace ? `xmlns:${a.name.localName}` : 'xmlns'}${value}`;
    const ans = a.name.namespace;
    if (!ans) return ` ${a.name.localName}${value}`;
    if (ans === XML_NAMESPACE.uri) return ` xml:${a.name.localName}${value}`;
    let p = prefixFor(treeHere, ans, false);
    if (p === null) {
      do p = `p${++generated}`;
      while (bound(treeHere, p) !== undefined);
      treeHere.push([p, ans]);
    }
    if (bound(writtenHere, p) !== ans) declare(p, ans);
    return ` ${p}:${a.name.localName}${value}`;
  });
  const name = prefix ? `${prefix}:${el.name.localName}` : el.name.localName;
  return { text: `${name}${added}${attrs.join('')}`, tree: treeHere, written: writtenHere };
}

function writeElement(
  out: BoundedText,
  el: XElement,
  indent: boolean,
  level: number,
  scope: { tree: Bindings; written: Bindings } = { tree: ancestorBindings(el), written: [] },
): void {
  const pad = indent ? '  '.repeat(level) : '';
  const tag = startTag(el, scope.tree, scope.written);
  const name = tag.text.slice(0, tag.text.search(/ |$/));
  const open = `<${tag.text}`;
  const close = `</${name}>`;
  if (el.nodes.length === 0) {
    out.add(el.emptyString ? `${pad}${open}>${close}` : `${pad}${open} />`);
    return;
  }
  out.add(`${pad}${open}>`);
  const inner = { tree: tag.tree, written: tag.written };
  if (!indent || el.nodes.some((n) => n instanceof XText)) {
    for (const n of el.nodes) writeNode(out, n, false, 0, inner);
    out.add(close);
    return;
  }
  for (const n of el.nodes) {
    out.add('\n');
    writeNode(out, n, true, level + 1, inner);
  }
  out.add(`\n${pad}${close}`);
}
