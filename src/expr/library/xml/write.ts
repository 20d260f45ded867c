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

function writeNode(out: BoundedText, n: XNode, indent: boolean, level: number): void {
  if (n instanceof XElement) writeElement(out, n, indent, level);
  else out.add(`${indent ? '  '.repeat(level) : ''}${leafText(n)}`);
}

function attributesText(el: XElement): string {
  let declarations = '';
  const prefixes = new Map<string, string>();
  const names = el.attributes.map((a) => {
    const ns = a.name.namespace;
    if (!ns) return a.name.localName;
    if (ns === XML_NAMESPACE.uri) return `xml:${a.name.localName}`;
    let prefix = prefixes.get(ns);
    if (!prefix) {
      // XmlWriter invents p1, p2, … for a namespace no prefix was declared for.
      prefix = `p${prefixes.size + 1}`;
      prefixes.set(ns, prefix);
      declarations += ` xmlns:${prefix}="${escAttr(ns)}"`;
    }
    return `${prefix}:${a.name.localName}`;
  });
  return declarations + el.attributes.map((a, i) => ` ${names[i]}="${escAttr(a.value)}"`).join('');
}

function writeElement(out: BoundedText, el: XElement, indent: boolean, level: number): void {
  const pad = indent ? '  '.repeat(level) : '';
  const ns =
    el.name.namespace && !(el.parent instanceof XElement && el.parent.name.namespace === el.name.namespace)
      ? ` xmlns="${escAttr(el.name.namespace)}"`
      : '';
  const open = `<${el.name.localName}${ns}${attributesText(el)}`;
  const close = `</${el.name.localName}>`;
  if (el.nodes.length === 0) {
    out.add(el.emptyString ? `${pad}${open}>${close}` : `${pad}${open} />`);
    return;
  }
  out.add(`${pad}${open}>`);
  if (!indent || el.nodes.some((n) => n instanceof XText)) {
    for (const n of el.nodes) writeNode(out, n, false, 0);
    out.add(close);
    return;
  }
  for (const n of el.nodes) {
    out.add('\n');
    writeNode(out, n, true, level + 1);
  }
  out.add(`\n${pad}${close}`);
}
