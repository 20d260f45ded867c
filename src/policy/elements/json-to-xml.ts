import { defineElement } from '../element.js';
import { bodyText, messageOf, replaceBody } from '../message.js';
import { ALL_SCOPES, bool, EMPTY, oneOf, str } from '../schema.js';

const NAME_START = /^[A-Za-z_]/;

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** JSON property names that are not XML names are encoded as Newtonsoft does (`_x0031_`-style). */
function xmlName(name: string): string {
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const ch = name[i]!;
    const ok = i === 0 ? NAME_START.test(ch) : /[A-Za-z0-9_.-]/.test(ch);
    out += ok ? ch : `_x${ch.charCodeAt(0).toString(16).padStart(4, '0')}_`;
  }
  return out === '' ? '_' : out;
}

interface Options {
  readonly attributeBlock: string | undefined;
}

function render(name: string, value: unknown, o: Options): string {
  const tag = xmlName(name);
  if (Array.isArray(value)) return value.map((v) => render(name, v, o)).join('');
  if (value === null) return `<${tag} />`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    let attrs = '';
    let inner = '';
    for (const [k, v] of entries) {
      if (o.attributeBlock !== undefined && k === o.attributeBlock && v !== null && typeof v === 'object') {
        for (const [ak, av] of Object.entries(v as Record<string, unknown>)) {
          attrs += ` ${xmlName(ak)}="${escapeXml(String(av))}"`;
        }
        continue;
      }
      inner += render(k, v, o);
    }
    return `<${tag}${attrs}>${inner}</${tag}>`;
  }
  return `<${tag}>${escapeXml(String(value))}</${tag}>`;
}

/** Converts a JSON body to XML (root `<Document>`), as API Management's json-to-xml does. */
export function jsonToXml(json: unknown, attributeBlock?: string): string {
  return render('Document', json, { attributeBlock });
}

const JSON_TYPE = /^(application|text)\/([\w.+-]*\+)?json\b/i;

/** Converts the message body from JSON to XML. */
export const jsonToXmlElement = defineElement({
  name: 'json-to-xml',
  summary: 'Converts a JSON body to XML.',
  sections: ['inbound', 'outbound', 'on-error'],
  scopes: ALL_SCOPES,
  attributes: {
    apply: oneOf(['always', 'content-type-json'], { required: true }),
    'consider-accept-header': bool({ default: true }),
    'parse-date': bool({ default: true, expression: false }),
    'namespace-separator': str(),
    'namespace-prefix': str(),
    'attribute-block-name': str(),
  },
  content: EMPTY,
  body: 'read-write',
  compile(node, c) {
    const apply = node.getter('apply');
    const considerAccept = node.getter('consider-accept-header');
    const attributeBlock = node.getter('attribute-block-name');
    const target = c.target;
    return (run) => {
      const message = messageOf(run, target);
      if (message.body === null) return 'next';
      const type = message.headers.getJoined('Content-Type') ?? '';
      if (apply(run) === 'content-type-json' && !JSON_TYPE.test(type)) return 'next';
      if (considerAccept(run)) {
        // Convert only when the client asks for XML (or accepts anything).
        const accept = run.context.request.headers.getJoined('Accept');
        if (accept !== undefined && !/xml|\*\/\*/i.test(accept)) return 'next';
      }
      let json: unknown;
      try {
        json = JSON.parse(bodyText(message));
      } catch {
        return 'next';
      }
      replaceBody(run, target, jsonToXml(json, attributeBlock?.(run)));
      message.headers.set('Content-Type', 'application/xml');
      return 'next';
    };
  },
});
