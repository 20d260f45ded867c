/**
 * XML Schema validation for validate-content's `validate-as="xml"` and `"soap"`
 * (learn.microsoft.com/azure/api-management/validate-content-policy): a body, or the first element of a SOAP
 * envelope's Body, against the XSD documents of the schema registry (`schemas:`) or of the API's WSDL definition.
 *
 * libxml2 compiled to WebAssembly (libxml2-wasm, MIT) validates; it is imported the first time a policy compiles an
 * XML validation, never at an engine's start. It may read nothing outside the schema set: a body or a schema with a
 * document type declaration (where entities live) is refused before libxml2 sees it, entities are never
 * substituted, and the one input provider libxml2 is given answers only the set's own documents (an `xs:include` or
 * `xs:import` of anything else fails to load and the schema does not compile).
 */

import type * as Libxml2 from 'libxml2-wasm';
import { SaxesParser, type SaxesTagNS } from 'saxes';

export const XSD_NAMESPACE = 'http://www.w3.org/2001/XMLSchema';
const SOAP_ENVELOPES = [
  'http://schemas.xmlsoap.org/soap/envelope/',
  'http://www.w3.org/2003/05/soap-envelope',
];

/** An XSD document: the URI its neighbours include or import it by, its text, its target namespace. */
export interface XsdDocument {
  readonly uri: string;
  readonly text: string;
  readonly targetNamespace: string;
  /** The local names of its global element declarations, when known (a WSDL's schemas). */
  readonly elements?: readonly string[];
}

/** What one validation compiles: the document it starts from and every document that may be included or imported. */
export interface XmlSchemaSet {
  /** The definition name errors give: the registry's schema id, or the API's. */
  readonly name: string;
  readonly entry: string;
  readonly documents: ReadonlyMap<string, string>;
  /** The global elements it declares (`{namespace}local`), when known: an operation's element must be one. */
  readonly declares?: ReadonlySet<string>;
}

export interface XmlName {
  readonly namespace: string;
  readonly localName: string;
}

/** An element of a body: its name and the line its start tag is on. */
export interface FoundElement extends XmlName {
  readonly line: number;
}

/** What validating one body found. */
export type XmlOutcome =
  /** Valid; `element` is the element validated (a SOAP body's first child; absent for an empty Body). */
  | { readonly kind: 'valid'; readonly element?: FoundElement }
  | {
      readonly kind: 'invalid';
      readonly element?: FoundElement;
      readonly message: string;
      readonly line: number;
      readonly position: number;
    }
  /** Not well-formed, a DOCTYPE, or not a SOAP envelope: the documented ValidationException. */
  | { readonly kind: 'unreadable'; readonly message: string }
  /** The schema set does not compile: the API's schema "could not be resolved". */
  | { readonly kind: 'unresolved'; readonly message: string };

/** Reads an XSD's target namespace, or says why the text is not a usable schema (well-formed, no DOCTYPE, xs:schema). */
export function readXsd(text: string): { targetNamespace: string } | { problem: string } {
  let problem: string | undefined;
  let targetNamespace: string | undefined;
  const parser = new SaxesParser({ xmlns: true, position: true });
  parser.on('doctype', () => {
    problem ??= 'a document type declaration is not allowed in a schema';
  });
  parser.on('error', (error) => {
    problem ??= `not well-formed XML: ${error.message}`;
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    if (targetNamespace !== undefined || problem !== undefined) return;
    if (tag.uri !== XSD_NAMESPACE || tag.local !== 'schema')
      problem = `the root element must be xs:schema (${XSD_NAMESPACE}), got <${tag.name}>`;
    targetNamespace = tag.attributes.targetNamespace?.value ?? '';
  });
  try {
    parser.write(text).close();
  } catch (error) {
    problem ??= `not well-formed XML: ${(error as Error).message}`;
  }
  if (problem !== undefined) return { problem };
  return { targetNamespace: targetNamespace ?? '' };
}

/** The registry's schema `id`, with every XML schema of the registry reachable as `/schemas/<id>` (as the docs include them). */
export function registrySchemaSet(id: string, registry: ReadonlyMap<string, XsdDocument>): XmlSchemaSet {
  return {
    name: id,
    entry: registryUri(id),
    documents: new Map([...registry.values()].map((doc) => [doc.uri, doc.text])),
  };
}

export const registryUri = (id: string): string => `/schemas/${id}`;

/** `{namespace}local`, or `local` without a namespace: how errors and `declares` name an element. */
export const qualifiedName = (namespace: string, localName: string): string =>
  namespace === '' ? localName : `{${namespace}}${localName}`;

/**
 * The schemas of a definition (a WSDL's `types`) as one set: a generated entry schema imports each by its namespace
 * (includes one without a namespace), so any of their global elements may be the body's root.
 */
export function definitionSchemaSet(name: string, documents: readonly XsdDocument[]): XmlSchemaSet {
  const entry = `urn:portcullis:definition:${encodeURIComponent(name)}`;
  const attribute = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const references = documents.map((doc) =>
    doc.targetNamespace === ''
      ? `<xs:include schemaLocation="${attribute(doc.uri)}"/>`
      : `<xs:import namespace="${attribute(doc.targetNamespace)}" schemaLocation="${attribute(doc.uri)}"/>`,
  );
  const text = `<xs:schema xmlns:xs="${XSD_NAMESPACE}">${references.join('')}</xs:schema>`;
  const declares = new Set(
    documents.flatMap((doc) =>
      (doc.elements ?? []).map((local) => qualifiedName(doc.targetNamespace, local)),
    ),
  );
  return {
    name,
    entry,
    documents: new Map([[entry, text], ...documents.map((d) => [d.uri, d.text] as const)]),
    declares,
  };
}

// ---------------------------------------------------------------------------------------------------------
// libxml2, loaded on first use

let library: Promise<typeof Libxml2> | undefined;
/** The documents the schema being compiled may load; the input provider answers nothing else. */
let loadable: ReadonlyMap<string, string> = new Map();

/** Starts loading libxml2 (once): called when a policy that validates XML compiles, so the first request finds it. */
export function loadXmlValidator(): Promise<typeof Libxml2> {
  library ??= import('libxml2-wasm').then((lib) => {
    const encoder = new TextEncoder();
    const open = new Map<number, { bytes: Uint8Array; at: number }>();
    let next = 1;
    lib.xmlRegisterInputProvider({
      // Every URI: what the provider does not answer must fail, not fall through to another loader.
      match: () => true,
      open: (uri) => {
        const text = loadable.get(uri);
        if (text === undefined) return undefined;
        const fd = next++;
        open.set(fd, { bytes: encoder.encode(text), at: 0 });
        return fd;
      },
      read: (fd, buffer) => {
        const file = open.get(fd);
        if (file === undefined) return -1;
        const n = Math.min(buffer.byteLength, file.bytes.length - file.at);
        buffer.set(file.bytes.subarray(file.at, file.at + n));
        file.at += n;
        return n;
      },
      close: (fd) => open.delete(fd),
    });
    return lib;
  });
  return library;
}

type Compiled = { validator: Libxml2.XsdValidator; schema: Libxml2.XmlDocument } | { problem: string };
/** Each set compiled once, for as long as the configuration that holds it (libxml2's memory is freed with it). */
const compiled = new WeakMap<XmlSchemaSet, Compiled>();

function compile(lib: typeof Libxml2, set: XmlSchemaSet): Compiled {
  const known = compiled.get(set);
  if (known !== undefined) return known;
  let result: Compiled;
  loadable = set.documents;
  try {
    const schema = lib.XmlDocument.fromString(set.documents.get(set.entry) ?? '', {
      url: set.entry,
      option: lib.ParseOption.XML_PARSE_NONET,
    });
    result = { validator: lib.XsdValidator.fromDoc(schema), schema };
  } catch (error) {
    result = { problem: libxmlMessage(error) };
  } finally {
    loadable = new Map();
  }
  compiled.set(set, result);
  return result;
}

const libxmlMessage = (error: unknown): string =>
  ((error as { details?: { message: string }[] }).details ?? [])
    .map((detail) => detail.message.trim())
    .filter(Boolean)
    .join(' ') || (error as Error).message.trim();

/** Why a body cannot be read as XML here: not well-formed, or a DOCTYPE (never given to libxml2). */
function bodyProblem(text: string): string | undefined {
  let problem: string | undefined;
  const parser = new SaxesParser();
  parser.on('doctype', () => {
    problem ??= 'A document type declaration is not allowed.';
  });
  parser.on('error', (error) => {
    problem ??= error.message;
  });
  try {
    parser.write(text).close();
  } catch (error) {
    problem ??= (error as Error).message;
  }
  return problem;
}

/** The first child element of a SOAP envelope's Body, null for an empty Body, or why the text is no envelope. */
function soapPayload(lib: typeof Libxml2, doc: Libxml2.XmlDocument): Libxml2.XmlElement | null | string {
  const envelope = doc.root;
  if (envelope.name !== 'Envelope' || !SOAP_ENVELOPES.includes(envelope.namespaceUri))
    return `The root element is not a SOAP 1.1 or 1.2 Envelope: <${envelope.name}> in "${envelope.namespaceUri}".`;
  const body = elementChildren(lib, envelope).find(
    (child) => child.name === 'Body' && child.namespaceUri === envelope.namespaceUri,
  );
  if (body === undefined) return 'The SOAP envelope has no Body.';
  return elementChildren(lib, body)[0] ?? null;
}

function elementChildren(lib: typeof Libxml2, element: Libxml2.XmlElement): Libxml2.XmlElement[] {
  const out: Libxml2.XmlElement[] = [];
  for (let node = element.firstChild; node !== null; node = node.next) {
    if (node instanceof lib.XmlElement) out.push(node);
  }
  return out;
}

/** Why `set` does not compile, or undefined when it does (`portcullis validate`). */
export async function xmlSchemaProblem(set: XmlSchemaSet): Promise<string | undefined> {
  const schema = compile(await loadXmlValidator(), set);
  return 'problem' in schema ? schema.problem : undefined;
}

/** Validates `text` (as XML, or as a SOAP envelope whose Body's first element is validated) against `set`. */
export async function validateXml(set: XmlSchemaSet, text: string, soap: boolean): Promise<XmlOutcome> {
  const lib = await loadXmlValidator();
  const schema = compile(lib, set);
  if ('problem' in schema) return { kind: 'unresolved', message: schema.problem };
  const refused = bodyProblem(text);
  if (refused !== undefined) return { kind: 'unreadable', message: refused };
  let doc: Libxml2.XmlDocument;
  try {
    doc = lib.XmlDocument.fromString(text, { option: lib.ParseOption.XML_PARSE_NONET });
  } catch (error) {
    return { kind: 'unreadable', message: libxmlMessage(error) };
  }
  try {
    const target = soap ? soapPayload(lib, doc) : doc.root;
    if (typeof target === 'string') return { kind: 'unreadable', message: target };
    if (target === null) return { kind: 'valid' };
    const element = { namespace: target.namespaceUri, localName: target.name, line: target.line };
    try {
      schema.validator.validate(target);
      return { kind: 'valid', element };
    } catch (error) {
      const detail = (error as Libxml2.XmlValidateError).details?.[0];
      return {
        kind: 'invalid',
        element,
        message: detail?.message.trim() ?? libxmlMessage(error),
        line: detail?.line ?? 0,
        position: detail?.col ?? 0,
      };
    }
  } finally {
    doc.dispose();
  }
}
