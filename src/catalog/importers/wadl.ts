/**
 * WADL (2009/02, and the 2006/10 draft namespace) → one API: each `method` of each (nested) `resource` is an
 * operation whose URL template is the joined resource paths, with template, query and header parameters.
 * `resource_type` (resource/@type) and top-level methods (method/@href) are followed within the document.
 */
import type { Diagnostic } from '../../diagnostic.js';
import { compileUrlTemplate, UrlTemplateError } from '../url-template.js';
import {
  httpUrl,
  ImportError,
  type ImportedApi,
  type ImportedOperation,
  type ImportedParameter,
  type ImportedResponse,
  type Importer,
  type JsonSchema,
  type ParameterType,
  slug,
} from './model.js';
import { child, children, documentation, readXml, resolveQName, type XmlElement } from './xml-tree.js';

const WADL = ['http://wadl.dev.java.net/2009/02', 'http://research.sun.com/wadl/2006/10'];
const XSD = 'http://www.w3.org/2001/XMLSchema';
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE']);

const XSD_TYPES: Readonly<Record<string, ParameterType>> = {
  int: 'integer',
  integer: 'integer',
  long: 'integer',
  short: 'integer',
  byte: 'integer',
  nonNegativeInteger: 'integer',
  positiveInteger: 'integer',
  negativeInteger: 'integer',
  nonPositiveInteger: 'integer',
  unsignedInt: 'integer',
  unsignedLong: 'integer',
  unsignedShort: 'integer',
  unsignedByte: 'integer',
  decimal: 'number',
  float: 'number',
  double: 'number',
  boolean: 'boolean',
};

interface Context {
  readonly file: string;
  readonly problems: Diagnostic[];
  readonly byId: ReadonlyMap<string, XmlElement>;
  readonly ids: Set<string>;
  readonly operations: ImportedOperation[];
}

export const importer: Importer = {
  format: 'wadl',
  description: 'WADL (W3C submission 2009/02)',
  async importFile(file, options) {
    const root = await readXml(file);
    const problems: Diagnostic[] = [];
    const problem = (element: XmlElement, message: string): void => {
      problems.push({ file, line: element.line, column: element.column, path: element.path, message });
    };
    if (root.localName !== 'application' || !WADL.includes(root.namespace)) {
      problem(
        root,
        `expected a WADL <application> (${WADL[0]}), found <${root.localName}> in "${root.namespace}"`,
      );
      throw new ImportError(problems);
    }
    const byId = new Map<string, XmlElement>();
    for (const element of root.children) {
      const id = element.attributes.get('id');
      if (id !== undefined && WADL.includes(element.namespace)) byId.set(id, element);
    }
    const context: Context = { file, problems, byId, ids: new Set(), operations: [] };

    const resourcesElements = children(root, WADL, 'resources');
    if (resourcesElements.length === 0) problem(root, 'the application has no <resources>');
    const bases = new Set(resourcesElements.map((resources) => resources.attributes.get('base') ?? ''));
    if (bases.size > 1) {
      problem(
        resourcesElements[1]!,
        `<resources> elements have different base URLs (${[...bases].join(', ')}); one API has one backend`,
      );
    }
    const base = resourcesElements[0]?.attributes.get('base');
    const serviceUrl = options.serviceUrl ?? base;
    if (resourcesElements[0] && (serviceUrl === undefined || httpUrl(serviceUrl) === undefined)) {
      problem(
        resourcesElements[0],
        serviceUrl === undefined
          ? '<resources> has no base URL; pass --service-url'
          : `base "${serviceUrl}" is not an absolute http(s) URL; pass --service-url`,
      );
    }
    for (const resources of resourcesElements) {
      for (const resource of children(resources, WADL, 'resource')) walkResource(context, resource, [], []);
    }
    if (problems.length > 0) throw new ImportError(problems);

    const name = children(root, WADL, 'doc')[0]?.attributes.get('title') ?? fileTitle(file);
    const description = documentation(root, WADL, 'doc');
    return {
      id: options.apiId ?? slug(name),
      name,
      ...(description ? { description } : {}),
      urlSuffix: options.urlSuffix,
      serviceUrl: httpUrl(serviceUrl!)!,
      type: 'http',
      operations: context.operations,
    } satisfies ImportedApi;
  },
};

function fileTitle(file: string): string {
  return (file.split(/[\\/]/).at(-1) ?? file).replace(/\.[^.]+$/, '');
}

/** A resource's own content plus that of the resource types it names (`type="#a #b"`). */
function expand(context: Context, resource: XmlElement): XmlElement[] {
  const parts = [resource];
  for (const reference of (resource.attributes.get('type') ?? '').split(/\s+/).filter(Boolean)) {
    const type = local(context, resource, reference, 'resource_type');
    if (type) parts.push(type);
  }
  return parts;
}

/** An in-document reference `#id` to an element named `localName`; reports anything else. */
function local(
  context: Context,
  from: XmlElement,
  reference: string,
  localName: string,
): XmlElement | undefined {
  const target = reference.startsWith('#') ? context.byId.get(reference.slice(1)) : undefined;
  if (target?.localName === localName) return target;
  context.problems.push({
    file: context.file,
    line: from.line,
    column: from.column,
    path: from.path,
    message: reference.startsWith('#')
      ? `no <${localName} id="${reference.slice(1)}"> in this document`
      : `reference "${reference}" to another document is not supported; use "#id" within this file`,
  });
  return undefined;
}

function walkResource(
  context: Context,
  resource: XmlElement,
  parentSegments: readonly string[],
  parentTemplateParameters: readonly ImportedParameter[],
): void {
  const rawPath = resource.attributes.get('path') ?? '';
  // JAX-RS writes template variables with a regular expression, `{id: [0-9]+}`; the gateway's templates do not.
  const segments = [
    ...parentSegments,
    ...rawPath
      .replace(/\{\s*([^}:\s]+)\s*(?::[^}]*)?\}/g, '{$1}')
      .split('/')
      .filter((segment) => segment !== ''),
  ];
  const parts = expand(context, resource);
  const params = parts.flatMap((part) => children(part, WADL, 'param'));
  const templateParameters = [
    ...parentTemplateParameters,
    ...params
      .filter((param) => param.attributes.get('style') === 'template')
      .map((p) => toParameter(p, true)),
  ];
  const resourceQuery = params.filter((param) => param.attributes.get('style') === 'query');
  const resourceHeaders = params.filter((param) => param.attributes.get('style') === 'header');

  for (const part of parts) {
    for (const reference of children(part, WADL, 'method')) {
      const href = reference.attributes.get('href');
      const method = href === undefined ? reference : local(context, reference, href, 'method');
      if (!method) continue;
      addOperation(context, reference, method, segments, templateParameters, resourceQuery, resourceHeaders);
    }
  }
  for (const part of parts) {
    for (const nested of children(part, WADL, 'resource')) {
      walkResource(context, nested, segments, templateParameters);
    }
  }
}

function addOperation(
  context: Context,
  at: XmlElement,
  method: XmlElement,
  segments: readonly string[],
  templateDeclared: readonly ImportedParameter[],
  resourceQuery: readonly XmlElement[],
  resourceHeaders: readonly XmlElement[],
): void {
  const report = (message: string): void => {
    context.problems.push({
      file: context.file,
      line: at.line,
      column: at.column,
      path: at.path,
      message,
    });
  };
  const verb = (method.attributes.get('name') ?? '').toUpperCase();
  if (!METHODS.has(verb)) {
    report(`method name "${method.attributes.get('name') ?? ''}" is not one of ${[...METHODS].join(', ')}`);
    return;
  }
  const urlTemplate = `/${segments.join('/')}`;
  let names: readonly string[];
  try {
    names = compileUrlTemplate(urlTemplate).parameters;
  } catch (error) {
    if (!(error instanceof UrlTemplateError)) throw error;
    report(error.message);
    return;
  }
  const request = child(method, WADL, 'request');
  const requestParams = request ? children(request, WADL, 'param') : [];
  const byStyle = (style: string) => requestParams.filter((param) => param.attributes.get('style') === style);
  // A later declaration of the same name (the method's own) wins over the resource's.
  const unique = (list: readonly ImportedParameter[]) => [
    ...new Map(list.map((parameter) => [parameter.name, parameter])).values(),
  ];

  const declaredId = method.attributes.get('id');
  let id = declaredId ?? slug(`${verb}-${urlTemplate}`);
  for (let n = 2; context.ids.has(id); n++) id = `${declaredId ?? slug(`${verb}-${urlTemplate}`)}-${n}`;
  context.ids.add(id);
  const doc = children(method, WADL, 'doc')[0];
  const description = documentation(method, WADL, 'doc');
  const representations = request ? children(request, WADL, 'representation') : [];
  const requestContentType = pickMediaType(
    representations.map((representation) => representation.attributes.get('mediaType') ?? ''),
  );

  const operation: ImportedOperation = {
    id,
    method: verb as ImportedOperation['method'],
    urlTemplate,
    displayName: doc?.attributes.get('title') ?? declaredId ?? `${verb} ${urlTemplate}`,
    ...(description ? { description } : {}),
    templateParameters: names.map(
      (name) =>
        templateDeclared.findLast((parameter) => parameter.name === name) ?? {
          name,
          required: true,
          type: 'string',
        },
    ),
    queryParameters: unique(
      [...resourceQuery, ...byStyle('query')].map((param) => toParameter(param, false)),
    ),
    headerParameters: unique(
      [...resourceHeaders, ...byStyle('header')].map((param) => toParameter(param, false)),
    ),
    ...(requestContentType ? { requestContentType } : {}),
    responses: children(method, WADL, 'response').flatMap(responsesOf),
  };
  const unnamed = [...resourceQuery, ...resourceHeaders, ...requestParams].find(
    (param) => (param.attributes.get('name') ?? '') === '',
  );
  if (unnamed) {
    context.problems.push({
      file: context.file,
      line: unnamed.line,
      column: unnamed.column,
      path: unnamed.path,
      message: 'param needs a name="…"',
    });
    return;
  }
  context.operations.push(operation);
}

function responsesOf(response: XmlElement): ImportedResponse[] {
  const description = documentation(response, WADL, 'doc');
  const contentType = pickMediaType(
    children(response, WADL, 'representation').map((item) => item.attributes.get('mediaType') ?? ''),
  );
  // No status means "any success" in WADL; API Management shows it as 200.
  const statuses = (response.attributes.get('status') ?? '200').split(/\s+/).filter(Boolean);
  return statuses.map((status) => ({
    status,
    ...(description ? { description } : {}),
    ...(contentType ? { contentType } : {}),
  }));
}

function toParameter(param: XmlElement, template: boolean): ImportedParameter {
  const typeName = param.attributes.get('type');
  const qname = typeName === undefined ? undefined : resolveQName(param, typeName);
  const type: ParameterType = (qname?.namespace === XSD && XSD_TYPES[qname.localName]) || 'string';
  const options = children(param, WADL, 'option')
    .map((option) => option.attributes.get('value'))
    .filter((value): value is string => value !== undefined);
  const fallback = param.attributes.get('default');
  const single: JsonSchema = {
    type,
    ...(options.length > 0 ? { enum: options } : {}),
    ...(fallback !== undefined ? { default: typedValue(fallback, type) } : {}),
  };
  const schema: JsonSchema =
    param.attributes.get('repeating') === 'true' ? { type: 'array', items: single } : single;
  const description = documentation(param, WADL, 'doc');
  return {
    name: param.attributes.get('name') ?? '',
    ...(description ? { description } : {}),
    required: template || param.attributes.get('required') === 'true',
    type,
    ...(schema.type !== type || Object.keys(schema).length > 1 ? { schema } : {}),
  };
}

/** A default written in the XML, as the JSON value of its declared type (kept as text when it does not fit). */
function typedValue(text: string, type: ParameterType): unknown {
  if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : text;
  if (type === 'integer' || type === 'number') {
    const value = Number(text);
    return text.trim() !== '' && Number.isFinite(value) ? value : text;
  }
  return text;
}

function pickMediaType(types: readonly string[]): string | undefined {
  const known = types.filter((type) => type !== '');
  return known.find((type) => /json/i.test(type)) ?? known[0];
}
