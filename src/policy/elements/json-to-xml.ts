import { defineElement } from '../element.js';
import { bodyText, messageOf, replaceBody } from '../message.js';
import { ALL_SCOPES, bool, EMPTY, oneOf, str } from '../schema.js';

const NAME_START = /^[A-Za-z_]/;
const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';

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
  /** Splits a property name into namespace prefix and local name (`namespace-separator`, default `_`). */
  readonly separator: string;
  /** Marks a property as a namespace declaration (`namespace-prefix`, usually `xmlns`); unset: none are. */
  readonly namespacePrefix: string | undefined;
}

/** Namespace prefixes in scope (prefix → URI), as the XML writer would see them at this element. */
type Scope = ReadonlyMap<string, string>;

/**
 * The XML prefix a property declares when it is a namespace declaration: `''` for the default namespace
 * (`xmlns`), the prefix for `xmlns{separator}p`, undefined when the property is not a declaration.
 */
function declaredPrefix(key: string, o: Options): string | undefined {
  const marker = o.namespacePrefix;
  if (marker === undefined || marker === '' || !key.startsWith(marker)) return undefined;
  if (key === marker) return '';
  const rest = key.slice(marker.length);
  if (o.separator === '' || !rest.startsWith(o.separator) || rest.length === o.separator.length)
    return undefined;
  return xmlName(rest.slice(o.separator.length));
}

/**
 * The XML name of a property: `prefix:local` when the part before the separator is a prefix declared on this
 * element or an ancestor; otherwise the whole name, encoded. An undeclared prefix cannot be written as one (the
 * XML would not be namespace-well-formed), so `a:b` without `xmlns:a` stays `a_x003a_b`.
 */
function qualifiedName(name: string, o: Options, scope: Scope): string {
  const at = o.separator === '' ? -1 : name.indexOf(o.separator);
  if (at > 0) {
    const prefix = xmlName(name.slice(0, at));
    const local = name.slice(at + o.separator.length);
    if (local !== '' && scope.has(prefix)) return `${prefix}:${xmlName(local)}`;
  }
  return xmlName(name);
}

/** Scalars as API Management writes them: booleans the .NET way (`True`), the rest as their JSON text. */
function scalarText(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return String(value);
}

function render(name: string, value: unknown, o: Options, scope: Scope): string {
  // An empty array still names its element (`"children": []` → `<children />`); a longer one repeats it.
  if (Array.isArray(value)) {
    return value.length === 0
      ? `<${qualifiedName(name, o, scope)} />`
      : value.map((v) => render(name, v, o, scope)).join('');
  }
  if (value === null) {
    const tag = qualifiedName(name, o, scope);
    const declare = scope.get('xsi') === XSI ? '' : ` xmlns:xsi="${XSI}"`;
    return `<${tag} xsi:nil="true"${declare} />`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    // Declarations first, wherever they stand among the properties: they govern this element's own name too.
    let inner: Map<string, string> | undefined;
    for (const [k, v] of entries) {
      const prefix = declaredPrefix(k, o);
      if (prefix === undefined) continue;
      inner ??= new Map(scope);
      inner.set(prefix, scalarText(v));
    }
    const here: Scope = inner ?? scope;
    const tag = qualifiedName(name, o, here);
    let attrs = '';
    let content = '';
    for (const [k, v] of entries) {
      const prefix = declaredPrefix(k, o);
      if (prefix !== undefined) {
        attrs += ` ${prefix === '' ? 'xmlns' : `xmlns:${prefix}`}="${escapeXml(scalarText(v))}"`;
        continue;
      }
      if (o.attributeBlock !== undefined && k === o.attributeBlock && v !== null && typeof v === 'object') {
        for (const [ak, av] of Object.entries(v as Record<string, unknown>)) {
          attrs += ` ${qualifiedName(ak, o, here)}="${escapeXml(scalarText(av))}"`;
        }
        continue;
      }
      content += render(k, v, o, here);
    }
    return content === '' ? `<${tag}${attrs} />` : `<${tag}${attrs}>${content}</${tag}>`;
  }
  const tag = qualifiedName(name, o, scope);
  return `<${tag}>${escapeXml(scalarText(value))}</${tag}>`;
}

export interface JsonToXmlOptions {
  readonly attributeBlockName?: string | undefined;
  readonly namespaceSeparator?: string | undefined;
  readonly namespacePrefix?: string | undefined;
}

const ROOT_SCOPE: Scope = new Map([['xml', XML_NS]]);

/**
 * Converts a JSON body to XML, as API Management's json-to-xml does. An object with one property (not an array,
 * not a declaration or attribute block) is the document: its property is the root element, as in the docs' SOAP
 * example. Anything else (several properties, an array property, a bare value) is wrapped in `<Document>`.
 */
export function jsonToXml(json: unknown, options: JsonToXmlOptions = {}): string {
  const o: Options = {
    attributeBlock: options.attributeBlockName,
    separator: options.namespaceSeparator ?? '_',
    namespacePrefix: options.namespacePrefix,
  };
  if (json !== null && typeof json === 'object' && !Array.isArray(json)) {
    const entries = Object.entries(json as Record<string, unknown>);
    const [only] = entries;
    if (
      entries.length === 1 &&
      only !== undefined &&
      !Array.isArray(only[1]) &&
      only[0] !== o.attributeBlock &&
      declaredPrefix(only[0], o) === undefined
    ) {
      return render(only[0], only[1], o, ROOT_SCOPE);
    }
  }
  return render('Document', json, o, ROOT_SCOPE);
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
    'namespace-separator': str({ default: '_' }),
    'namespace-prefix': str(),
    'attribute-block-name': str(),
  },
  content: EMPTY,
  body: 'read-write',
  compile(node, c) {
    const apply = node.getter('apply');
    const considerAccept = node.getter('consider-accept-header');
    const attributeBlock = node.getter('attribute-block-name');
    const namespaceSeparator = node.getter('namespace-separator');
    const namespacePrefix = node.getter('namespace-prefix');
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
      const xml = jsonToXml(json, {
        attributeBlockName: attributeBlock?.(run),
        namespaceSeparator: namespaceSeparator(run),
        namespacePrefix: namespacePrefix?.(run),
      });
      replaceBody(run, target, xml);
      message.headers.set('Content-Type', 'application/xml');
      return 'next';
    };
  },
});
