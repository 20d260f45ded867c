/** System.Xml.Linq subset: XDocument, XElement, XAttribute, XName (parsed with saxes). */
import { SaxesParser } from 'saxes';
import { toDotNetStringRt } from '../runtime/convert.js';
import {
  BoundedText,
  CsException,
  checkSize,
  defineType,
  type Method,
  prop,
  type Rt,
} from '../runtime/core.js';
import { str } from './helpers.js';
import { xmlValueTo } from './xml-conversions.js';

export class XName {
  constructor(
    readonly localName: string,
    readonly namespace: string,
  ) {}
  get expanded(): string {
    return this.namespace ? `{${this.namespace}}${this.localName}` : this.localName;
  }
}

export class XAttribute {
  parent: XElement | null = null;
  constructor(
    readonly name: XName,
    public value: string,
  ) {}
}

export class XText {
  parent: XElement | null = null;
  constructor(public value: string) {}
}

export class XElement {
  parent: XElement | XDocument | null = null;
  readonly attributes: XAttribute[] = [];
  readonly nodes: (XElement | XText)[] = [];
  constructor(public name: XName) {}
  get value(): string {
    return this.nodes.map((n) => (n instanceof XText ? n.value : n.value)).join('');
  }
  elements(): XElement[] {
    return this.nodes.filter((n): n is XElement => n instanceof XElement);
  }
}

export class XDocument {
  root: XElement | null = null;
}

function toName(v: unknown): XName {
  if (v instanceof XName) return v;
  const s = str(v, 'name');
  const m = /^\{(.*)\}(.+)$/.exec(s);
  return m ? new XName(m[2]!, m[1]!) : new XName(s, '');
}

const xmlError = (message: string): CsException => new CsException('XmlException', message);

export function parseXDocument(text: string): XDocument {
  const doc = new XDocument();
  const stack: XElement[] = [];
  const parser = new SaxesParser({ xmlns: true, position: true });
  let count = 0;
  parser.on('opentag', (tag) => {
    if (++count > 100_000) throw xmlError('XML document has too many elements');
    const el = new XElement(new XName(tag.local, tag.uri));
    for (const a of Object.values(tag.attributes)) {
      if (a.prefix === 'xmlns' || a.name === 'xmlns') continue;
      const attr = new XAttribute(new XName(a.local, a.uri), a.value);
      attr.parent = el;
      el.attributes.push(attr);
    }
    const parent = stack[stack.length - 1];
    if (parent) {
      el.parent = parent;
      parent.nodes.push(el);
    } else {
      el.parent = doc;
      doc.root = el;
    }
    stack.push(el);
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  const onText = (t: string): void => {
    const parent = stack[stack.length - 1];
    if (parent && t.length) {
      const node = new XText(t);
      node.parent = parent;
      parent.nodes.push(node);
    }
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  try {
    parser.write(text).close();
  } catch (e) {
    throw xmlError((e as Error).message);
  }
  if (!doc.root) throw xmlError('Root element is missing.');
  // Whitespace-only text between elements is insignificant (LoadOptions.None).
  const strip = (el: XElement): void => {
    if (el.elements().length > 0) {
      for (let i = el.nodes.length - 1; i >= 0; i--) {
        const n = el.nodes[i]!;
        if (n instanceof XText && n.value.trim() === '') el.nodes.splice(i, 1);
      }
    }
    el.elements().forEach(strip);
  };
  strip(doc.root);
  return doc;
}

const escText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escAttr = (s: string): string => escText(s).replace(/"/g, '&quot;');

/** XML text of an element; with `rt`, the output is counted as it is written and the string limit raised on the way. */
export function writeXml(rt: Rt | null, el: XElement, indent: boolean): string {
  const out = new BoundedText(rt);
  writeElement(out, el, indent, 0);
  return out.toString();
}

function writeElement(out: BoundedText, el: XElement, indent: boolean, level: number): void {
  const pad = indent ? '  '.repeat(level) : '';
  const attrs = el.attributes.map((a) => ` ${a.name.localName}="${escAttr(a.value)}"`).join('');
  const ns =
    el.name.namespace && !(el.parent instanceof XElement && el.parent.name.namespace === el.name.namespace)
      ? ` xmlns="${escAttr(el.name.namespace)}"`
      : '';
  const open = `<${el.name.localName}${ns}${attrs}`;
  const close = `</${el.name.localName}>`;
  if (el.nodes.length === 0) {
    out.add(`${pad}${open} />`);
    return;
  }
  if (el.nodes.every((n) => n instanceof XText)) {
    out.add(`${pad}${open}>${escText(el.value)}${close}`);
    return;
  }
  out.add(`${pad}${open}>`);
  if (!indent || el.nodes.some((n) => n instanceof XText)) {
    for (const n of el.nodes) {
      if (n instanceof XText) out.add(escText(n.value));
      else writeElement(out, n, false, 0);
    }
    out.add(close);
    return;
  }
  for (const n of el.nodes) {
    out.add('\n');
    writeElement(out, n as XElement, true, level + 1);
  }
  out.add(`\n${pad}${close}`);
}

function descendants(el: XElement, out: XElement[]): void {
  for (const c of el.elements()) {
    out.push(c);
    descendants(c, out);
  }
}

const matches = (el: XElement, name: unknown): boolean =>
  name === undefined || el.name.expanded === toName(name).expanded;

const containerMethods: Record<string, Method> = {
  Descendants: (_rt, self: XElement | XDocument, args) => {
    const all: XElement[] = [];
    if (self instanceof XDocument) {
      if (self.root) {
        all.push(self.root);
        descendants(self.root, all);
      }
    } else descendants(self, all);
    return all.filter((e) => matches(e, args[0]));
  },
  Elements: (_rt, self: XElement | XDocument, args) => {
    const kids = self instanceof XDocument ? (self.root ? [self.root] : []) : self.elements();
    return kids.filter((e) => matches(e, args[0]));
  },
  Element: (_rt, self: XElement | XDocument, args) => {
    const kids = self instanceof XDocument ? (self.root ? [self.root] : []) : self.elements();
    return kids.find((e) => matches(e, args[0])) ?? null;
  },
};

function addContent(rt: Rt, el: XElement, content: unknown): void {
  if (content === null || content === undefined) return;
  if (Array.isArray(content)) {
    for (const c of content) addContent(rt, el, c);
    return;
  }
  if (content instanceof XAttribute) {
    content.parent = el;
    el.attributes.push(content);
  } else if (content instanceof XElement) {
    content.parent = el;
    el.nodes.push(content);
  } else {
    const t = new XText(toDotNetStringRt(rt, content));
    t.parent = el;
    el.nodes.push(t);
  }
  checkSize(rt, el.nodes.length + el.attributes.length);
}

export const XNameType = defineType({
  name: 'XName',
  namespace: 'System.Xml.Linq',
  classes: [XName],
  props: {
    LocalName: prop((n: XName) => n.localName),
    NamespaceName: prop((n: XName) => n.namespace),
  },
  methods: { ToString: (_rt, n: XName) => n.expanded },
  staticMethods: {
    Get: (_rt, _s, args) => toName(args.length > 1 ? `{${str(args[1])}}${str(args[0])}` : args[0]),
  },
});

export const XAttributeType = defineType({
  name: 'XAttribute',
  namespace: 'System.Xml.Linq',
  classes: [XAttribute],
  explicitTo: (a: XAttribute, target) => xmlValueTo(a.value, target),
  construct: (rt, args) => new XAttribute(toName(args[0]), toDotNetStringRt(rt, args[1])),
  props: {
    Name: prop((a: XAttribute) => a.name),
    Value: {
      get: (_rt, a: XAttribute) => a.value,
      set: (rt, a: XAttribute, v) => {
        a.value = toDotNetStringRt(rt, v);
      },
    },
    Parent: prop((a: XAttribute) => a.parent),
  },
  methods: { ToString: (_rt, a: XAttribute) => `${a.name.localName}="${escAttr(a.value)}"` },
});

export const XElementType = defineType({
  name: 'XElement',
  namespace: 'System.Xml.Linq',
  aliases: ['XNode', 'XContainer'],
  classes: [XElement],
  explicitTo: (e: XElement, target) => xmlValueTo(e.value, target),
  construct: (rt, args) => {
    const el = new XElement(toName(args[0]));
    for (const c of args.slice(1)) addContent(rt, el, c);
    return el;
  },
  props: {
    Name: prop((e: XElement) => e.name),
    Value: {
      get: (_rt, e: XElement) => e.value,
      set: (rt, e: XElement, v) => {
        e.nodes.length = 0;
        addContent(rt, e, toDotNetStringRt(rt, v));
      },
    },
    Parent: prop((e: XElement) => (e.parent instanceof XElement ? e.parent : null)),
    HasElements: prop((e: XElement) => e.elements().length > 0),
    HasAttributes: prop((e: XElement) => e.attributes.length > 0),
    IsEmpty: prop((e: XElement) => e.nodes.length === 0),
  },
  methods: {
    ...containerMethods,
    Attribute: (_rt, e: XElement, args) =>
      e.attributes.find((a) => a.name.expanded === toName(args[0]).expanded) ?? null,
    Attributes: (_rt, e: XElement) => [...e.attributes],
    Add: (rt, e: XElement, args) => {
      for (const a of args) addContent(rt, e, a);
      return null;
    },
    SetAttributeValue: (rt, e: XElement, args) => {
      const name = toName(args[0]);
      const i = e.attributes.findIndex((a) => a.name.expanded === name.expanded);
      if (args[1] === null) {
        if (i >= 0) e.attributes.splice(i, 1);
      } else if (i >= 0) e.attributes[i]!.value = toDotNetStringRt(rt, args[1]);
      else addContent(rt, e, new XAttribute(name, toDotNetStringRt(rt, args[1])));
      return null;
    },
    Remove: (_rt, e: XElement) => {
      if (e.parent instanceof XElement) e.parent.nodes.splice(e.parent.nodes.indexOf(e), 1);
      e.parent = null;
      return null;
    },
    ToString: (rt, e: XElement, args) =>
      writeXml(rt, e, args.length === 0 || toDotNetStringRt(null, args[0]) !== 'DisableFormatting'),
  },
  staticMethods: { Parse: (_rt, _s, args) => parseXDocument(str(args[0], 'text')).root },
});

export const XDocumentType = defineType({
  name: 'XDocument',
  namespace: 'System.Xml.Linq',
  classes: [XDocument],
  construct: (rt, args) => {
    const d = new XDocument();
    for (const a of args) if (a instanceof XElement) d.root = a;
    void rt;
    return d;
  },
  props: { Root: prop((d: XDocument) => d.root) },
  methods: {
    ...containerMethods,
    ToString: (rt, d: XDocument) => (d.root ? writeXml(rt, d.root, true) : ''),
  },
  staticMethods: { Parse: (_rt, _s, args) => parseXDocument(str(args[0], 'text')) },
});
