/**
 * XDocument.Parse / XElement.Parse with LoadOptions.None, on saxes: the declaration, document type, comments,
 * processing instructions, CDATA sections and text are kept as their own nodes; whitespace-only text beside other
 * nodes is insignificant and dropped.
 */
import { SaxesParser } from 'saxes';
import { CsException } from '../../runtime/core.js';
import {
  attach,
  isXmlWhitespace,
  XAttribute,
  XCData,
  XComment,
  type XContainer,
  XDeclaration,
  XDocument,
  XDocumentType,
  XElement,
  XMLNS_NAMESPACE,
  XName,
  XProcessingInstruction,
  XText,
} from './nodes.js';

const xmlError = (message: string): CsException => new CsException('XmlException', message);

const MAX_NODES = 100_000;

/** `<!DOCTYPE name PUBLIC "p" "s" [subset]>` as saxes hands it over: the text after `<!DOCTYPE`. */
function documentType(text: string): XDocumentType {
  const m =
    /^\s*([^\s[>]+)\s*(?:(PUBLIC)\s+("[^"]*"|'[^']*')\s*("[^"]*"|'[^']*')?|(SYSTEM)\s+("[^"]*"|'[^']*'))?\s*(?:\[([\s\S]*)\])?\s*$/.exec(
      text,
    );
  if (!m) throw xmlError(`The document type declaration is not valid: ${text.trim()}`);
  const unquote = (s: string | undefined): string | null => (s === undefined ? null : s.slice(1, -1));
  const publicId = m[2] ? unquote(m[3]) : null;
  const systemId = m[2] ? unquote(m[4]) : unquote(m[6]);
  return new XDocumentType(m[1]!, publicId, systemId, m[7] ?? null);
}

export function parseXDocument(text: string): XDocument {
  const doc = new XDocument();
  const stack: XContainer[] = [doc];
  const parser = new SaxesParser({ xmlns: true, position: true });
  let count = 0;
  const add = (n: XElement | XText | XComment | XProcessingInstruction | XDocumentType): void => {
    if (++count > MAX_NODES) throw xmlError('XML document has too many nodes');
    const parent = stack[stack.length - 1]!;
    // Text outside the root element can only be whitespace, which LoadOptions.None drops.
    if (parent === doc && n instanceof XText) return;
    attach(parent, n);
  };
  parser.on('xmldecl', (d) => {
    doc.declaration = new XDeclaration(d.version ?? null, d.encoding ?? null, d.standalone ?? null);
  });
  parser.on('doctype', (d) => add(documentType(d)));
  parser.on('opentag', (tag) => {
    const el = new XElement(new XName(tag.local, tag.uri));
    // Namespace declarations stay attributes, as .NET keeps them: `xmlns:soap` is {http://www.w3.org/2000/xmlns/}soap.
    for (const a of Object.values(tag.attributes)) {
      const name =
        a.name === 'xmlns'
          ? new XName('xmlns', '')
          : a.prefix === 'xmlns'
            ? new XName(a.local, XMLNS_NAMESPACE.uri)
            : new XName(a.local, a.uri);
      attach(el, new XAttribute(name, a.value));
    }
    add(el);
    stack.push(el);
  });
  parser.on('closetag', (tag) => {
    const el = stack.pop() as XElement;
    // `<a></a>` holds the empty string; `<a/>` nothing.
    el.emptyString = !tag.isSelfClosing && el.nodes.length === 0;
  });
  parser.on('text', (t) => {
    if (t.length) add(new XText(t));
  });
  parser.on('cdata', (t) => add(new XCData(t)));
  parser.on('comment', (t) => add(new XComment(t)));
  parser.on('processinginstruction', (pi) => add(new XProcessingInstruction(pi.target, pi.body)));
  try {
    parser.write(text).close();
  } catch (e) {
    if (e instanceof CsException) throw e;
    throw xmlError((e as Error).message);
  }
  if (!doc.root) throw xmlError('Root element is missing.');
  dropInsignificantWhitespace(doc.root);
  return doc;
}

/** Whitespace-only text beside elements, comments or instructions is not content (LoadOptions.None). */
function dropInsignificantWhitespace(root: XElement): void {
  const isText = (n: unknown): boolean => n instanceof XText && !(n instanceof XCData);
  // A loop, not recursion: a deeply nested body must not exhaust the stack.
  const pending = [root];
  for (let el = pending.pop(); el; el = pending.pop()) {
    if (el.nodes.some((n) => !(n instanceof XText))) {
      for (let i = el.nodes.length - 1; i >= 0; i--) {
        const n = el.nodes[i]!;
        if (isText(n) && isXmlWhitespace((n as XText).value)) el.nodes.splice(i, 1)[0]!.parent = null;
      }
    }
    pending.push(...el.elements());
  }
}
