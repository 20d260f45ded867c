import { SaxesParser } from 'saxes';
import { defineElement } from '../element.js';
import { bodyText, messageOf, replaceBody } from '../message.js';
import { ALL_SCOPES, bool, EMPTY, oneOf } from '../schema.js';

interface Node {
  name: string;
  attributes: Record<string, string>;
  children: Node[];
  text: string;
}

function parse(xml: string): Node {
  const parser = new SaxesParser();
  const root: Node = { name: '', attributes: {}, children: [], text: '' };
  const stack: Node[] = [root];
  parser.on('doctype', () => {
    throw new Error('a DOCTYPE is not allowed');
  });
  parser.on('opentag', (tag) => {
    const node: Node = {
      name: tag.name,
      attributes: { ...(tag.attributes as Record<string, string>) },
      children: [],
      text: '',
    };
    stack[stack.length - 1]!.children.push(node);
    stack.push(node);
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  parser.on('text', (t) => {
    stack[stack.length - 1]!.text += t;
  });
  parser.on('cdata', (t) => {
    stack[stack.length - 1]!.text += t;
  });
  parser.write(xml).close();
  return root;
}

/**
 * `direct` keeps the XML shape as Newtonsoft's SerializeXmlNode does (`@attr`, `#text`); `javascript-friendly`
 * drops the markers: attributes become plain properties and text-only elements become strings.
 */
function convert(node: Node, friendly: boolean, alwaysArray: boolean): unknown {
  const attrs = Object.entries(node.attributes);
  const text = node.text.trim();
  if (node.children.length === 0 && attrs.length === 0) return text === '' ? null : text;
  const out: Record<string, unknown> = {};
  for (const [k, v] of attrs) out[friendly ? k : `@${k}`] = v;
  const groups = new Map<string, unknown[]>();
  for (const child of node.children) {
    const list = groups.get(child.name) ?? [];
    list.push(convert(child, friendly, alwaysArray));
    groups.set(child.name, list);
  }
  for (const [name, values] of groups) out[name] = values.length === 1 && !alwaysArray ? values[0] : values;
  if (text !== '') out[friendly ? '$' : '#text'] = text;
  return out;
}

export function xmlToJson(xml: string, kind: 'javascript-friendly' | 'direct', alwaysArray = false): string {
  const doc = parse(xml);
  const out: Record<string, unknown> = {};
  for (const child of doc.children)
    out[child.name] = convert(child, kind === 'javascript-friendly', alwaysArray);
  return JSON.stringify(out);
}

const XML_TYPE = /^(application|text)\/([\w.+-]*\+)?xml\b/i;

/** Converts the message body from XML to JSON. */
export const xmlToJsonElement = defineElement({
  name: 'xml-to-json',
  summary: 'Converts an XML body to JSON.',
  sections: ['inbound', 'outbound', 'on-error'],
  scopes: ALL_SCOPES,
  attributes: {
    kind: oneOf(['javascript-friendly', 'direct'], { required: true }),
    apply: oneOf(['always', 'content-type-xml'], { required: true }),
    'consider-accept-header': bool({ default: true }),
    'always-array-child-elements': bool({ default: false }),
  },
  content: EMPTY,
  body: 'read-write',
  compile(node, c) {
    const kind = node.getter('kind');
    const apply = node.getter('apply');
    const considerAccept = node.getter('consider-accept-header');
    const alwaysArray = node.getter('always-array-child-elements');
    const target = c.target;
    return (run) => {
      const message = messageOf(run, target);
      if (message.body === null) return 'next';
      const type = message.headers.getJoined('Content-Type') ?? '';
      if (apply(run) === 'content-type-xml' && !XML_TYPE.test(type)) return 'next';
      if (considerAccept(run)) {
        const accept = run.context.request.headers.getJoined('Accept');
        if (accept !== undefined && !/json|\*\/\*/i.test(accept)) return 'next';
      }
      const k = kind(run) === 'direct' ? 'direct' : 'javascript-friendly';
      replaceBody(run, target, xmlToJson(bodyText(message), k, alwaysArray(run)));
      message.headers.set('Content-Type', 'application/json');
      return 'next';
    };
  },
});
