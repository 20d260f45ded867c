/**
 * Reads a policy document into a small element tree: named values substituted, expressions masked, saxes for
 * the XML, then attribute values and text restored from the unmasked text. Every node keeps its offset in the
 * substituted text; PolicySource maps it back to a line and column of the original file.
 */
import { SaxesParser } from 'saxes';
import { decodeEntities, type ExpressionSpan, maskExpressions, ScanError } from './scanner.js';
import type { PolicySource } from './source.js';

export interface XmlAttribute {
  readonly name: string;
  /** Decoded value; an expression's text is kept exactly as written (entities decoded). */
  readonly value: string;
  /** Offset of the attribute name. */
  readonly offset: number;
  /** Offset of the first character of the value. */
  readonly valueOffset: number;
}

export interface XmlText {
  readonly kind: 'text';
  readonly value: string;
  readonly offset: number;
  readonly cdata: boolean;
}

export interface XmlElement {
  readonly kind: 'element';
  readonly name: string;
  /** Offset of `<`. */
  readonly offset: number;
  readonly attributes: readonly XmlAttribute[];
  readonly children: readonly XmlNode[];
  /** Range of the content between the start and the end tag (empty for `<x/>`). */
  readonly contentStart: number;
  readonly contentEnd: number;
}

export type XmlNode = XmlElement | XmlText;

/** An XML-level problem at an offset of the substituted text. */
export class XmlError extends Error {
  override readonly name = 'XmlError';
  constructor(
    readonly offset: number,
    message: string,
    readonly code: 'xml' | 'doctype' | 'expression' = 'xml',
  ) {
    super(message);
  }
}

interface Building {
  name: string;
  offset: number;
  attributes: XmlAttribute[];
  children: XmlNode[];
  contentStart: number;
}

/** Parses the substituted text of `source`; throws XmlError at the first problem. */
export function parseXml(source: PolicySource): XmlElement {
  const text = source.text;
  let masked: string;
  let spans: ExpressionSpan[];
  try {
    ({ masked, spans } = maskExpressions(text));
  } catch (err) {
    if (err instanceof ScanError) throw new XmlError(err.offset, err.message, 'expression');
    throw err;
  }
  const restore = (from: number, to: number): string => restoreRange(text, spans, from, to);

  const parser = new SaxesParser({ position: true });
  const stack: Building[] = [];
  let root: XmlElement | undefined;
  let cursor = 0;
  let pendingAttributes: XmlAttribute[] = [];
  let failure: XmlError | undefined;
  let lastClosed: Building | undefined;

  parser.on('error', (err) => {
    if (failure) return;
    const message = err.message.replace(/^(?:[^:\n]*:)?\d+:\d+: /, '');
    // saxes says only "unexpected close tag." for `</b>` where `<a>` is open, after closing `<a>` itself (the
    // closetag just handled): name both, and where `<a>` opened, which is where the mistake usually is (a tag never
    // closed), not at the close tag that noticed it.
    const open = lastClosed;
    if (message.startsWith('unexpected close tag') && open !== undefined) {
      const closeAt = masked.lastIndexOf('</', parser.position - 1);
      const closing = /^<\/([^\s>]*)/.exec(masked.slice(closeAt))?.[1] ?? '';
      const opened = source.position(open.offset);
      failure = new XmlError(
        closeAt,
        `</${closing}> does not close <${open.name}>, which is open since ${opened.line}:${opened.column}`,
      );
      return;
    }
    // saxes reports "file:line:col: message"; we position it ourselves from the parser's offset.
    failure = new XmlError(Math.max(0, parser.position - 1), message);
  });
  parser.on('doctype', () => {
    failure ??= new XmlError(
      masked.lastIndexOf('<!DOCTYPE', parser.position),
      'a DOCTYPE is not allowed',
      'doctype',
    );
  });
  parser.on('opentagstart', () => {
    pendingAttributes = [];
  });
  parser.on('attribute', (attr) => {
    // Called right after the closing quote: walk back to the value and the name in the masked text.
    const quoteAt = parser.position - 1;
    const quote = masked[quoteAt]!;
    const valueStart = masked.lastIndexOf(quote, quoteAt - 1) + 1;
    const nameOffset = masked.lastIndexOf(attr.name, valueStart);
    const raw = masked.slice(valueStart, quoteAt);
    const value = raw.includes('@') ? restore(valueStart, quoteAt) : attr.value;
    pendingAttributes.push({ name: attr.name, value, offset: nameOffset, valueOffset: valueStart });
  });
  parser.on('opentag', (tag) => {
    const offset = masked.lastIndexOf(`<${tag.name}`, parser.position - 1);
    const building: Building = {
      name: tag.name,
      offset,
      attributes: pendingAttributes,
      children: [],
      contentStart: parser.position,
    };
    stack.push(building);
    cursor = parser.position;
  });
  parser.on('closetag', (tag) => {
    const b = stack.pop()!;
    lastClosed = b;
    const selfClosing = tag.isSelfClosing;
    const end = selfClosing ? b.contentStart : masked.lastIndexOf('</', parser.position - 1);
    const element: XmlElement = {
      kind: 'element',
      name: b.name,
      offset: b.offset,
      attributes: b.attributes,
      children: b.children,
      contentStart: b.contentStart,
      contentEnd: Math.max(b.contentStart, end),
    };
    const parent = stack[stack.length - 1];
    if (parent === undefined) root = element;
    else parent.children.push(element);
    cursor = parser.position;
  });
  parser.on('text', (t) => {
    const end = parser.position - 1;
    const parent = stack[stack.length - 1];
    if (parent !== undefined && t.trim() !== '') {
      const value = masked.slice(cursor, end).includes('@') ? restore(cursor, end) : t;
      parent.children.push({ kind: 'text', value, offset: cursor, cdata: false });
    }
    cursor = end;
  });
  parser.on('cdata', (data) => {
    const parent = stack[stack.length - 1];
    const start = masked.lastIndexOf('<![CDATA[', parser.position) + 9;
    if (parent !== undefined) parent.children.push({ kind: 'text', value: data, offset: start, cdata: true });
    cursor = parser.position;
  });
  parser.on('comment', () => {
    cursor = parser.position;
  });
  parser.on('processinginstruction', () => {
    cursor = parser.position;
  });

  try {
    parser.write(masked).close();
  } catch (err) {
    // saxes throws when no error handler stops it; the handler above already recorded the first failure. saxes can
    // also fail on its own on malformed input (a RangeError for an unpaired surrogate right after `<!`): the
    // document's fault as much as any other, so it is refused where the parser stood, never thrown as a crash.
    if (failure === undefined && err instanceof XmlError) throw err;
    failure ??= new XmlError(Math.max(0, parser.position - 1), 'the document is not well-formed XML here');
  }
  if (failure !== undefined) throw failure;
  if (root === undefined) throw new XmlError(0, 'the document has no root element');
  return root;
}

/** Rebuilds the decoded text of a range of the source, keeping expressions as written (entities decoded). */
function restoreRange(text: string, spans: readonly ExpressionSpan[], from: number, to: number): string {
  let out = '';
  let last = from;
  for (const s of spans) {
    if (s.end <= from || s.start >= to) continue;
    out += decodeEntities(text.slice(last, s.start));
    out += decodeEntities(text.slice(s.start, s.end));
    last = s.end;
  }
  return out + decodeEntities(text.slice(last, to));
}

/** Concatenated text children of an element (CDATA included), or undefined when it has none. */
export function textOf(element: XmlElement): XmlText | undefined {
  const texts = element.children.filter((c): c is XmlText => c.kind === 'text');
  if (texts.length === 0) return undefined;
  if (texts.length === 1) return texts[0];
  return { kind: 'text', value: texts.map((t) => t.value).join(''), offset: texts[0]!.offset, cdata: false };
}

/** The element children of an element, in order (text and CDATA left out). */
export function elementChildren(el: XmlElement): XmlElement[] {
  return el.children.filter((c): c is XmlElement => c.kind === 'element');
}

/**
 * The text of an element that holds some: its non-blank text children (and CDATA, even blank) joined, at the
 * first one's offset; undefined when there is none.
 */
export function textChild(el: XmlElement): XmlText | undefined {
  const texts = el.children.filter(
    (c): c is XmlText => c.kind === 'text' && (c.cdata || c.value.trim() !== ''),
  );
  if (texts.length <= 1) return texts[0];
  return { kind: 'text', value: texts.map((t) => t.value).join(''), offset: texts[0]!.offset, cdata: false };
}
