/**
 * WSDL 1.1 and 2.0 with SOAP 1.1 / 1.2 bindings → a SOAP pass-through API, as API Management imports one:
 * the backend is the endpoint's address, and every WSDL operation becomes `POST /`, told apart by its SOAP
 * action or by the first element of the SOAP body (`SoapMatch` in the model).
 *
 * The first service port (1.1) / endpoint (2.0) whose binding is SOAP is the one imported.
 */
import type { Diagnostic } from '../../diagnostic.js';
import {
  httpUrl,
  ImportError,
  type ImportedApi,
  type ImportedOperation,
  type Importer,
  type ImportOptions,
  type SoapMatch,
  slug,
  type XmlName,
} from './model.js';
import { wsdlSchemas } from './wsdl-schemas.js';
import {
  child,
  children,
  documentation,
  parseXml,
  readXmlText,
  resolveQName,
  type XmlElement,
} from './xml-tree.js';

const WSDL11 = ['http://schemas.xmlsoap.org/wsdl/'];
const SOAP11 = ['http://schemas.xmlsoap.org/wsdl/soap/'];
const SOAP12 = ['http://schemas.xmlsoap.org/wsdl/soap12/'];
const SOAP_ANY = [...SOAP11, ...SOAP12];
const WSDL20 = ['http://www.w3.org/ns/wsdl'];
const WSOAP = 'http://www.w3.org/ns/wsdl/soap';
/** WS-Addressing `Action` on a WSDL 2.0 interface input: the action when the binding sets no `wsoap:action`. */
const WSAM_ACTION = [
  '{http://www.w3.org/2007/05/addressing/metadata}Action',
  '{http://www.w3.org/2006/05/addressing/wsdl}Action',
];

class Problems {
  readonly list: Diagnostic[] = [];
  constructor(readonly file: string) {}
  at(element: XmlElement, message: string): void {
    this.list.push({
      file: this.file,
      line: element.line,
      column: element.column,
      path: element.path,
      message,
    });
  }
  throwIfAny(): void {
    if (this.list.length > 0) throw new ImportError(this.list);
  }
}

export const importer: Importer = {
  format: 'wsdl',
  description: 'WSDL 1.1 or 2.0 with a SOAP 1.1 or 1.2 binding (SOAP pass-through)',
  async importFile(file, options) {
    const text = await readXmlText(file);
    const root = parseXml(text, file);
    const problems = new Problems(file);
    // The schemas come from the same text as the operations: one read of the file, one version of it.
    if (root.localName === 'definitions' && WSDL11.includes(root.namespace)) {
      return { ...wsdl11(root, options, problems), xmlSchemas: wsdlSchemas(text, file) };
    }
    if (root.localName === 'description' && WSDL20.includes(root.namespace)) {
      return { ...wsdl20(root, options, problems), xmlSchemas: wsdlSchemas(text, file) };
    }
    problems.at(
      root,
      `expected WSDL 1.1 <definitions> (${WSDL11[0]}) or WSDL 2.0 <description> (${WSDL20[0]}), found <${root.localName}> in "${root.namespace}"`,
    );
    throw new ImportError(problems.list);
  },
};

/** Top-level elements named `localName`, by their qualified name in the target namespace. */
function index(root: XmlElement, namespaces: readonly string[], localName: string): Map<string, XmlElement> {
  const targetNamespace = root.attributes.get('targetNamespace') ?? '';
  return new Map(
    children(root, namespaces, localName).map((element) => [
      key({ namespace: targetNamespace, localName: element.attributes.get('name') ?? '' }),
      element,
    ]),
  );
}

function key(name: XmlName): string {
  return `{${name.namespace}}${name.localName}`;
}

/** Looks up the element a QName attribute names; reports a missing attribute or an unknown name. */
function lookup(
  problems: Problems,
  at: XmlElement,
  attribute: string,
  table: ReadonlyMap<string, XmlElement>,
  what: string,
): XmlElement | undefined {
  const value = at.attributes.get(attribute);
  if (value === undefined) {
    problems.at(at, `${attribute}="…" is required`);
    return undefined;
  }
  const name = resolveQName(at, value);
  if (!name) {
    problems.at(at, `${attribute}="${value}": the prefix is not bound to a namespace`);
    return undefined;
  }
  const found = table.get(key(name));
  if (!found) problems.at(at, `${attribute}="${value}": no ${what} named ${key(name)} in this document`);
  return found;
}

function buildApi(
  root: XmlElement,
  service: XmlElement,
  address: { element: XmlElement; location: string | undefined },
  operations: ImportedOperation[],
  options: ImportOptions,
  problems: Problems,
): ImportedApi {
  const serviceUrl = options.serviceUrl ?? address.location;
  if (serviceUrl === undefined || httpUrl(serviceUrl) === undefined) {
    problems.at(
      address.element,
      serviceUrl === undefined
        ? 'the endpoint has no address; pass --service-url'
        : `address "${serviceUrl}" is not an absolute http(s) URL; pass --service-url`,
    );
  }
  problems.throwIfAny();
  const name = service.attributes.get('name') ?? root.attributes.get('name') ?? 'soap-service';
  const description = documentation(service, [service.namespace], 'documentation');
  return {
    id: options.apiId ?? slug(name),
    name,
    ...(description ? { description } : {}),
    urlSuffix: options.urlSuffix,
    serviceUrl: httpUrl(serviceUrl!)!,
    type: 'soap',
    operations,
  };
}

/** Operation ids must be unique; WSDL 1.1 allows overloaded operation names. */
function uniqueId(ids: Set<string>, name: string): string {
  let id = name;
  for (let n = 2; ids.has(id); n++) id = `${name}-${n}`;
  ids.add(id);
  return id;
}

function soapOperation(
  id: string,
  name: string,
  description: string | undefined,
  soap: SoapMatch,
): ImportedOperation {
  return {
    id,
    method: 'POST',
    urlTemplate: '/',
    displayName: name,
    ...(description ? { description } : {}),
    templateParameters: [],
    queryParameters: [],
    headerParameters: [],
    requestContentType: soap.version === '1.1' ? 'text/xml' : 'application/soap+xml',
    responses: [
      {
        status: '200',
        contentType: soap.version === '1.1' ? 'text/xml' : 'application/soap+xml',
      },
    ],
    soap,
  };
}

// ---------------------------------------------------------------------------------------------------------
// WSDL 1.1

function wsdl11(root: XmlElement, options: ImportOptions, problems: Problems): ImportedApi {
  for (const item of children(root, WSDL11, 'import')) {
    problems.at(item, 'wsdl:import is not supported: merge the imported definitions into one file');
  }
  const messages = index(root, WSDL11, 'message');
  const portTypes = index(root, WSDL11, 'portType');
  const bindings = index(root, WSDL11, 'binding');

  // The first port whose binding is SOAP 1.1 or 1.2, in document order.
  let chosen:
    | { service: XmlElement; port: XmlElement; binding: XmlElement; soapBinding: XmlElement }
    | undefined;
  for (const service of children(root, WSDL11, 'service')) {
    for (const port of children(service, WSDL11, 'port')) {
      const name = port.attributes.get('binding');
      const qname = name === undefined ? undefined : resolveQName(port, name);
      const binding = qname ? bindings.get(key(qname)) : undefined;
      const soapBinding = binding ? child(binding, SOAP_ANY, 'binding') : undefined;
      if (binding && soapBinding) {
        chosen ??= { service, port, binding, soapBinding };
      }
    }
  }
  if (!chosen) {
    problems.at(root, 'no <service>/<port> uses a SOAP 1.1 or 1.2 binding: nothing to import');
    throw new ImportError(problems.list);
  }
  const { service, port, binding, soapBinding } = chosen;
  const version: SoapMatch['version'] = SOAP12.includes(soapBinding.namespace) ? '1.2' : '1.1';
  const defaultStyle = soapBinding.attributes.get('style') ?? 'document';
  const portType = lookup(problems, binding, 'type', portTypes, 'portType');
  const address = child(port, SOAP_ANY, 'address');

  const ids = new Set<string>();
  const operations: ImportedOperation[] = [];
  for (const bound of children(binding, WSDL11, 'operation')) {
    const name = bound.attributes.get('name') ?? '';
    const abstract = portType
      ? children(portType, WSDL11, 'operation').find((op) => op.attributes.get('name') === name)
      : undefined;
    if (portType && !abstract) {
      problems.at(bound, `operation "${name}" is not in portType "${portType.attributes.get('name')}"`);
      continue;
    }
    const soapOp = child(bound, SOAP_ANY, 'operation');
    const style = soapOp?.attributes.get('style') ?? defaultStyle;
    const action = soapOp?.attributes.get('soapAction');
    const bodyOf = (direction: 'input' | 'output'): XmlName | undefined => {
      const boundMessage = child(bound, WSDL11, direction);
      const soapBody = boundMessage ? child(boundMessage, SOAP_ANY, 'body') : undefined;
      if (style === 'rpc') {
        // RPC style wraps the parts in an element named after the operation, in soap:body's namespace.
        return {
          namespace: soapBody?.attributes.get('namespace') ?? '',
          localName: direction === 'input' ? name : `${name}Response`,
        };
      }
      const abstractMessage = abstract ? child(abstract, WSDL11, direction) : undefined;
      if (!abstractMessage) return undefined;
      const message = lookup(problems, abstractMessage, 'message', messages, 'message');
      if (!message) return undefined;
      const wanted = soapBody?.attributes.get('parts')?.split(/\s+/).filter(Boolean);
      const parts = children(message, WSDL11, 'part').filter(
        (part) => !wanted || wanted.includes(part.attributes.get('name') ?? ''),
      );
      const element = parts[0]?.attributes.get('element');
      if (element === undefined) return undefined;
      const qname = resolveQName(parts[0]!, element);
      if (!qname) problems.at(parts[0]!, `element="${element}": the prefix is not bound to a namespace`);
      return qname;
    };
    const bodyElement = bodyOf('input');
    const responseElement = bodyOf('output');
    const description = abstract ? documentation(abstract, WSDL11, 'documentation') : undefined;
    operations.push(
      soapOperation(uniqueId(ids, name), name, description, {
        version,
        ...(action ? { action } : {}),
        ...(bodyElement ? { bodyElement } : {}),
        ...(responseElement ? { responseElement } : {}),
      }),
    );
  }
  if (operations.length === 0 && problems.list.length === 0) {
    problems.at(binding, 'the binding has no operations');
  }
  return buildApi(
    root,
    service,
    { element: address ?? port, location: address?.attributes.get('location') },
    operations,
    options,
    problems,
  );
}

// ---------------------------------------------------------------------------------------------------------
// WSDL 2.0

function wsdl20(root: XmlElement, options: ImportOptions, problems: Problems): ImportedApi {
  for (const item of [...children(root, WSDL20, 'import'), ...children(root, WSDL20, 'include')]) {
    problems.at(
      item,
      `wsdl:${item.localName} is not supported: merge the referenced description into one file`,
    );
  }
  const interfaces = index(root, WSDL20, 'interface');
  const bindings = index(root, WSDL20, 'binding');

  let chosen: { service: XmlElement; endpoint: XmlElement; binding: XmlElement } | undefined;
  for (const service of children(root, WSDL20, 'service')) {
    for (const endpoint of children(service, WSDL20, 'endpoint')) {
      const name = endpoint.attributes.get('binding');
      const qname = name === undefined ? undefined : resolveQName(endpoint, name);
      const binding = qname ? bindings.get(key(qname)) : undefined;
      if (binding?.attributes.get('type') === WSOAP) chosen ??= { service, endpoint, binding };
    }
  }
  if (!chosen) {
    problems.at(root, `no <service>/<endpoint> uses a SOAP binding (type="${WSOAP}"): nothing to import`);
    throw new ImportError(problems.list);
  }
  const { service, endpoint, binding } = chosen;
  const versionText = binding.attributes.get(`{${WSOAP}}version`) ?? '1.2';
  if (versionText !== '1.1' && versionText !== '1.2') {
    problems.at(binding, `wsoap:version must be "1.1" or "1.2", got "${versionText}"`);
  }
  const version: SoapMatch['version'] = versionText === '1.1' ? '1.1' : '1.2';
  const root20 = lookup(problems, binding, 'interface', interfaces, 'interface');

  // Operations of the interface and of those it extends, by qualified name.
  const abstract = new Map<string, XmlElement>();
  const visit = (element: XmlElement, seen: Set<XmlElement>): void => {
    if (seen.has(element)) return;
    seen.add(element);
    const targetNamespace = root.attributes.get('targetNamespace') ?? '';
    for (const op of children(element, WSDL20, 'operation')) {
      abstract.set(key({ namespace: targetNamespace, localName: op.attributes.get('name') ?? '' }), op);
    }
    for (const name of (element.attributes.get('extends') ?? '').split(/\s+/).filter(Boolean)) {
      const qname = resolveQName(element, name);
      const parent = qname ? interfaces.get(key(qname)) : undefined;
      if (parent) visit(parent, seen);
      else problems.at(element, `extends="${name}": no interface of that name in this document`);
    }
  };
  if (root20) visit(root20, new Set());

  const actions = new Map<string, string>();
  for (const bound of children(binding, WSDL20, 'operation')) {
    const ref = bound.attributes.get('ref');
    const qname = ref === undefined ? undefined : resolveQName(bound, ref);
    if (!qname || !abstract.has(key(qname))) {
      problems.at(bound, `ref="${ref ?? ''}": no operation of that name in the binding's interface`);
      continue;
    }
    const action = bound.attributes.get(`{${WSOAP}}action`);
    if (action) actions.set(key(qname), action);
  }

  const ids = new Set<string>();
  const operations: ImportedOperation[] = [];
  for (const [qualified, op] of abstract) {
    const name = op.attributes.get('name') ?? '';
    const elementOf = (direction: 'input' | 'output'): XmlName | undefined => {
      const message = child(op, WSDL20, direction);
      const element = message?.attributes.get('element');
      // #any, #none and #other name no element to match on.
      if (!message || element === undefined || element.startsWith('#')) return undefined;
      const qname = resolveQName(message, element);
      if (!qname) problems.at(message, `element="${element}": the prefix is not bound to a namespace`);
      return qname;
    };
    const input = child(op, WSDL20, 'input');
    const action =
      actions.get(qualified) ??
      WSAM_ACTION.map((attribute) => input?.attributes.get(attribute)).find((value) => value !== undefined);
    const bodyElement = elementOf('input');
    const responseElement = elementOf('output');
    operations.push(
      soapOperation(uniqueId(ids, name), name, documentation(op, WSDL20, 'documentation'), {
        version,
        ...(action ? { action } : {}),
        ...(bodyElement ? { bodyElement } : {}),
        ...(responseElement ? { responseElement } : {}),
      }),
    );
  }
  if (operations.length === 0 && problems.list.length === 0) {
    problems.at(binding, "the binding's interface has no operations");
  }
  return buildApi(
    root,
    service,
    { element: endpoint, location: endpoint.attributes.get('address') },
    operations,
    options,
    problems,
  );
}
