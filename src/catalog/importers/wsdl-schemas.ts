/**
 * The XML schemas a WSDL carries in its `types` (1.1 and 2.0), each as a stand-alone XSD document: what
 * validate-content validates a SOAP API's bodies against when the policy names no schema of the registry
 * ("By default, validation of request or response content uses JSON or XML schemas from the API definition").
 *
 * Each `xs:schema` is cut out of the WSDL's text as written, with the namespace declarations it inherits from the
 * WSDL (a `tns:` prefix declared on `definitions`, say) added to its start tag, so line numbers inside it stay those
 * of the WSDL. A DOCTYPE is refused, as every XML the gateway reads.
 */
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { XSD_NAMESPACE, type XsdDocument } from '../../policy/shared/xml-schema.js';

const TYPES_PARENTS = ['http://schemas.xmlsoap.org/wsdl/', 'http://www.w3.org/ns/wsdl'];

interface Open {
  readonly tag: SaxesTagNS;
  /** Namespace bindings in scope at this element (prefix → URI; '' for the default namespace). */
  readonly scope: ReadonlyMap<string, string>;
}

/** The schemas of `text`'s `types`, or why they cannot be read. `base` names them (`<base>#schema<n>`). */
export function wsdlSchemas(text: string, base: string): XsdDocument[] | { problem: string } {
  const found: XsdDocument[] = [];
  const stack: Open[] = [];
  let problem: string | undefined;
  let start:
    | {
        offset: number;
        depth: number;
        inherited: Map<string, string>;
        targetNamespace: string;
        elements: string[];
      }
    | undefined;
  const parser = new SaxesParser({ xmlns: true, position: true });
  parser.on('doctype', () => {
    problem ??= 'a document type declaration is not allowed';
  });
  parser.on('error', (error) => {
    problem ??= error.message;
  });
  let tagStart = 0;
  parser.on('opentagstart', () => {
    tagStart = text.lastIndexOf('<', parser.position - 1);
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    const parent = stack[stack.length - 1];
    const scope = new Map(parent?.scope);
    for (const [prefix, uri] of Object.entries(tag.ns)) scope.set(prefix, uri);
    stack.push({ tag, scope });
    const inTypes =
      parent !== undefined && parent.tag.local === 'types' && TYPES_PARENTS.includes(parent.tag.uri);
    // A global element declaration: a child of the schema itself.
    if (start !== undefined && stack.length === start.depth + 1 && tag.uri === XSD_NAMESPACE) {
      const name = tag.attributes.name?.value;
      if (tag.local === 'element' && name !== undefined) start.elements.push(name);
    }
    if (start === undefined && inTypes && tag.uri === XSD_NAMESPACE && tag.local === 'schema') {
      // What the schema uses of its ancestors' declarations: every binding it does not make itself.
      const inherited = new Map([...(parent?.scope ?? [])].filter(([prefix]) => !(prefix in tag.ns)));
      start = {
        offset: tagStart,
        depth: stack.length,
        inherited,
        targetNamespace: tag.attributes.targetNamespace?.value ?? '',
        elements: [],
      };
    }
  });
  parser.on('closetag', (tag: SaxesTagNS) => {
    const depth = stack.length;
    stack.pop();
    if (start === undefined || depth !== start.depth) return;
    const written = text.slice(start.offset, parser.position);
    const nameEnd = start.offset + 1 + tag.name.length;
    const declarations = [...start.inherited]
      .map(([prefix, uri]) => ` ${prefix === '' ? 'xmlns' : `xmlns:${prefix}`}="${escapeAttribute(uri)}"`)
      .join('');
    found.push({
      uri: `${base}#schema${found.length + 1}`,
      text: text.slice(start.offset, nameEnd) + declarations + written.slice(nameEnd - start.offset),
      targetNamespace: start.targetNamespace,
      elements: start.elements,
    });
    start = undefined;
  });
  try {
    parser.write(text).close();
  } catch (error) {
    problem ??= (error as Error).message;
  }
  return problem === undefined ? found : { problem };
}

const escapeAttribute = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
