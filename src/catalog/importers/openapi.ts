/**
 * OpenAPI 3.0 / 3.1 and Swagger 2.0 (JSON or YAML) → one API. @readme/openapi-parser validates the definition
 * and resolves every `$ref` (internal and to other files); this file only maps the resolved document onto the
 * catalog's model and places the parser's complaints at `file:line:col`.
 */

import path from 'node:path';
import { bundle, dereference, validate } from '@readme/openapi-parser';
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
  type ImportOptions,
  ImportRefusedError,
  type JsonSchema,
  type ParameterType,
  type ResponseContent,
  slug,
} from './model.js';
import { checkReferences, confinedResolvers, RefusedReference } from './references.js';
import { pointerTokens, SourceMap, toPointer } from './source-map.js';

type Json = Record<string, unknown>;
type Dialect = 'swagger-2.0' | 'openapi-3.0' | 'openapi-3.1';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** OpenAPI 3 says these header parameters are ignored: the HTTP layer owns them. */
const RESERVED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

export const importer: Importer = {
  format: 'openapi',
  description: 'OpenAPI 3.0 / 3.1 or Swagger 2.0, JSON or YAML',
  async importFile(file, options) {
    const sources = new SourceMap();
    // Our own parse first: syntax errors get exact positions, and `servers` are read as written (the parser
    // rewrites relative server URLs against the file's location).
    const raw = await sources.load(file);
    if (!isObject(raw)) {
      throw new ImportError([{ file, line: 1, column: 1, message: 'not an OpenAPI or Swagger document' }]);
    }
    const dialect = dialectOf(raw);
    if (!dialect) {
      const found = raw.openapi ?? raw.swagger;
      throw new ImportError([
        await at(
          sources,
          file,
          found === undefined ? '' : raw.openapi !== undefined ? '/openapi' : '/swagger',
          {
            message:
              found === undefined
                ? 'neither "openapi" nor "swagger" is set: not an OpenAPI or Swagger document'
                : `unsupported version ${JSON.stringify(found)} (supported: OpenAPI 3.0, 3.1, Swagger 2.0)`,
          },
        ),
      ]);
    }
    await checkReferences(file, sources, options.root);
    const resolvers = (
      options.root === undefined ? {} : confinedResolvers(options.root, sources)
    ) as ParserOptions;
    await validateDefinition(file, sources, resolvers);
    // Bundling first makes every remaining `$ref` internal, so circular schemas left as `$ref` by the
    // dereference can be copied into `$defs`.
    const document = (await dereference(await bundle(file, resolvers), {
      ...resolvers,
      dereference: { circular: 'ignore' },
    })) as unknown as Json;
    return toApi(document, raw, dialect, file, options, sources);
  },
};

function dialectOf(raw: Json): Dialect | undefined {
  if (raw.swagger === '2.0') return 'swagger-2.0';
  if (typeof raw.openapi === 'string' && /^3\.0\.\d+$/.test(raw.openapi)) return 'openapi-3.0';
  if (typeof raw.openapi === 'string' && /^3\.1\.\d+$/.test(raw.openapi)) return 'openapi-3.1';
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Validation and error positions

/** The parser's options; the resolvers are given as objects, which its types do not spell. */
type ParserOptions = NonNullable<Parameters<typeof validate>[1]>;

async function validateDefinition(file: string, sources: SourceMap, resolvers: ParserOptions): Promise<void> {
  let result: Awaited<ReturnType<typeof validate>>;
  try {
    result = await validate(file, { ...resolvers, validate: { errors: { colorize: false } } });
  } catch (error) {
    if (error instanceof RefusedReference) {
      throw new ImportRefusedError(error.problems.map((problem) => placeRefused(problem, sources)));
    }
    // A referenced file that cannot be read or parsed, or a version the parser does not know.
    throw new ImportError([await placeResolverError((error as Error).message, file, sources)]);
  }
  if (result.valid) return;
  const codeFrames = needsLineMap(result.errors)
    ? jsonLinePointers(await dereference(file, { ...resolvers, dereference: { circular: 'ignore' } }))
    : [];
  const problems: Diagnostic[] = [];
  for (const error of result.errors)
    problems.push(await placeError(error.message, file, sources, codeFrames));
  if (result.additionalErrors > 0) {
    problems.push({ file, message: `and ${result.additionalErrors} more errors` });
  }
  throw new ImportError(problems);
}

/**
 * "Error parsing /abs/other.yaml: …" is re-parsed by us for an exact position in that file; "Error opening
 * file /abs/other.yaml: ENOENT …" is shown where the `$ref` to that file is written.
 */
async function placeResolverError(message: string, file: string, sources: SourceMap): Promise<Diagnostic> {
  const headline = message.split('\n')[0]!;
  const target = /^Error (?:parsing|opening file) (.+?): /.exec(headline)?.[1];
  if (target === undefined) return { file, message: headline };
  if (headline.startsWith('Error parsing')) await sources.load(target);
  const found = sources.findRef(
    (value, from) =>
      value.split('#')[0] !== '' && path.resolve(path.dirname(from), value.split('#')[0]!) === target,
  );
  return found
    ? { file: found.file, line: found.line, column: found.column, message: headline }
    : { file, message: headline };
}

/**
 * A read the confined resolvers refused names the file or URL it was asked for: shown at the `$ref` that leads
 * there when one does (the walk of `checkReferences` refuses the plain ones first; these came another way).
 */
function placeRefused(problem: Diagnostic, sources: SourceMap): Diagnostic {
  const found = sources.findRef((value, from) => {
    const target = value.split('#')[0]!;
    return (
      target === problem.file || (target !== '' && path.resolve(path.dirname(from), target) === problem.file)
    );
  });
  return found
    ? {
        file: found.file,
        line: found.line,
        column: found.column,
        message: `$ref to ${problem.file}: ${problem.message}`,
      }
    : problem;
}

const CODE_FRAME_LINE = /^>\s*(\d+) \|/m;

function needsLineMap(errors: readonly { message: string }[]): boolean {
  return errors.some((error) => CODE_FRAME_LINE.test(error.message));
}

/**
 * The parser reports three kinds of message: schema violations with a code frame of the dereferenced document
 * pretty-printed as JSON (its line numbers mean nothing in the user's YAML, so they are turned back into a JSON
 * pointer), semantic checks naming an operation like `/paths/a/{id}/get`, and missing `$ref` targets.
 */
async function placeError(
  message: string,
  file: string,
  sources: SourceMap,
  codeFrames: readonly string[],
): Promise<Diagnostic> {
  const [headline = message, ...frame] = message.split('\n');
  const frameLine = CODE_FRAME_LINE.exec(message);
  if (frameLine) {
    const pointer = codeFrames[Number(frameLine[1]) - 1];
    // The caret line of the frame says what is wrong at that spot, e.g. "url is missing here!".
    const caret = frame.find((line) => /^\s*\|\s*\^/.test(line))?.replace(/^\s*\|\s*\^+\s*/, '');
    const text = `${headline.replace(/^[A-Z]+ /, '')}${caret ? ` (${caret})` : ''}`;
    return pointer === undefined ? { file, message: text } : at(sources, file, pointer, { message: text });
  }
  const missing = /Missing \$ref pointer "([^"]+)"/.exec(headline);
  if (missing) {
    const found = sources.findRef((value) => value === missing[1] || value.endsWith(missing[1]!));
    return found
      ? { file: found.file, line: found.line, column: found.column, message: headline }
      : { file, message: headline };
  }
  const named = /`(\/(?:paths|components|definitions|parameters|responses)[^`]*)`/.exec(headline);
  if (named) {
    const pointer = await namedPointer(named[1]!, file, sources);
    return at(sources, file, pointer, { message: headline });
  }
  return { file, message: headline };
}

/** `/paths/a/{id}/get/...` (the parser's unescaped operation name) → a JSON pointer, matching the path key. */
async function namedPointer(name: string, file: string, sources: SourceMap): Promise<string> {
  if (!name.startsWith('/paths/')) return name;
  const raw = (await sources.load(file)) as Json;
  const rest = name.slice('/paths'.length);
  const key = Object.keys(isObject(raw.paths) ? raw.paths : {})
    .filter((candidate) => rest === candidate || rest.startsWith(`${candidate}/`))
    .sort((a, b) => b.length - a.length)[0];
  if (key === undefined) return '/paths';
  return `${toPointer(['paths', key])}${rest.slice(key.length)}`;
}

async function at(
  sources: SourceMap,
  file: string,
  pointer: string,
  problem: { message: string },
): Promise<Diagnostic> {
  const found = await sources.locate(file, pointer);
  if (!found) return { file, path: pointer, message: problem.message };
  return {
    file: found.file,
    line: found.line,
    column: found.column,
    path: found.pointer,
    message: problem.message,
  };
}

/**
 * The JSON pointer of each line of `JSON.stringify(value, null, 2)`: index 0 is line 1. That is how the
 * parser prints the document its code frames point into.
 */
export function jsonLinePointers(value: unknown): string[] {
  const lines: string[] = [];
  const emit = (node: unknown, tokens: readonly (string | number)[]): void => {
    const pointer = toPointer(tokens);
    if (Array.isArray(node)) {
      if (node.length === 0) return;
      node.forEach((item, index) => {
        lines.push(toPointer([...tokens, index]));
        emit(item, [...tokens, index]);
      });
      lines.push(pointer);
      return;
    }
    if (isObject(node)) {
      const entries = Object.entries(node).filter(
        ([, item]) => item !== undefined && typeof item !== 'function',
      );
      if (entries.length === 0) return;
      for (const [key, item] of entries) {
        lines.push(toPointer([...tokens, key]));
        emit(item, [...tokens, key]);
      }
      lines.push(pointer);
    }
  };
  lines.push('');
  emit(value, []);
  return lines;
}

// ---------------------------------------------------------------------------------------------------------
// Mapping the resolved document

async function toApi(
  document: Json,
  raw: Json,
  dialect: Dialect,
  file: string,
  options: ImportOptions,
  sources: SourceMap,
): Promise<ImportedApi> {
  const info = isObject(document.info) ? document.info : {};
  const title = typeof info.title === 'string' && info.title.trim() !== '' ? info.title : file;
  const problems: Promise<Diagnostic>[] = [];
  const serviceUrl = options.serviceUrl ?? backendUrl(raw, dialect);
  if (serviceUrl === undefined || httpUrl(serviceUrl) === undefined) {
    const where = dialect === 'swagger-2.0' ? '/host' : '/servers';
    problems.push(
      at(sources, file, where, {
        message:
          serviceUrl === undefined
            ? `no absolute backend URL (${dialect === 'swagger-2.0' ? 'host' : 'servers[0].url'}); pass --service-url`
            : `backend URL "${serviceUrl}" is not an absolute http(s) URL; pass --service-url`,
      }),
    );
  }

  const operations: ImportedOperation[] = [];
  const ids = new Set<string>();
  const paths = isObject(document.paths) ? document.paths : {};
  for (const [pathKey, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    let parameterNames: readonly string[];
    try {
      parameterNames = compileUrlTemplate(pathKey).parameters;
    } catch (error) {
      if (!(error instanceof UrlTemplateError)) throw error;
      problems.push(at(sources, file, toPointer(['paths', pathKey]), { message: error.message }));
      continue;
    }
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      operations.push(toOperation(document, dialect, pathKey, method, item, operation, parameterNames, ids));
    }
  }
  const found = await Promise.all(problems);
  if (found.length > 0) throw new ImportError(found);
  return {
    id: options.apiId ?? slug(title),
    name: title,
    ...(typeof info.description === 'string' && info.description !== ''
      ? { description: info.description }
      : {}),
    urlSuffix: options.urlSuffix,
    serviceUrl: httpUrl(serviceUrl!)!,
    type: 'http',
    operations,
    ...webhookNotes(document),
  };
}

/**
 * OpenAPI 3.1's webhooks are requests the API sends to its subscribers, not requests it serves: nothing for the
 * gateway to route. Said, so a webhook-only definition does not import to no operations in silence.
 */
function webhookNotes(document: Json): { notes?: string[] } {
  const names = isObject(document.webhooks) ? Object.keys(document.webhooks) : [];
  if (names.length === 0) return {};
  return {
    notes: [
      `webhooks not imported (${names.join(', ')}): they are requests the API sends to its subscribers, not requests it serves`,
    ],
  };
}

/** `servers[0]` with its variables at their defaults (3.x), or `schemes` + `host` + `basePath` (2.0). */
function backendUrl(raw: Json, dialect: Dialect): string | undefined {
  if (dialect === 'swagger-2.0') {
    if (typeof raw.host !== 'string') return undefined;
    const schemes = Array.isArray(raw.schemes) ? raw.schemes : [];
    // The spec's default is "the scheme used to access the definition", which a file does not have.
    const scheme = schemes.includes('https') ? 'https' : (schemes[0] ?? 'https');
    const basePath = typeof raw.basePath === 'string' ? raw.basePath : '';
    return `${scheme}://${raw.host}${basePath}`;
  }
  const server = Array.isArray(raw.servers) ? raw.servers[0] : undefined;
  if (!isObject(server) || typeof server.url !== 'string') return undefined;
  const variables = isObject(server.variables) ? server.variables : {};
  return server.url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const variable = variables[name];
    return isObject(variable) && typeof variable.default === 'string' ? variable.default : whole;
  });
}

function toOperation(
  document: Json,
  dialect: Dialect,
  pathKey: string,
  method: (typeof METHODS)[number],
  item: Json,
  operation: Json,
  templateNames: readonly string[],
  ids: Set<string>,
): ImportedOperation {
  // Operation-level parameters override path-level ones with the same name and location.
  const merged = new Map<string, Json>();
  for (const parameter of [...asArray(item.parameters), ...asArray(operation.parameters)]) {
    if (isObject(parameter)) merged.set(`${parameter.in}:${parameter.name}`, parameter);
  }
  const parameters = [...merged.values()];
  const of = (location: string) => parameters.filter((parameter) => parameter.in === location);

  const templateParameters = templateNames.map((name) => {
    const declared = of('path').find((parameter) => parameter.name === name);
    return declared
      ? { ...toParameter(document, dialect, declared), required: true }
      : { name, required: true, type: 'string' as const };
  });
  const headerParameters = of('header')
    .filter((parameter) => !RESERVED_HEADERS.has(String(parameter.name).toLowerCase()))
    .map((parameter) => toParameter(document, dialect, parameter));

  const operationId = typeof operation.operationId === 'string' ? operation.operationId : undefined;
  let id = operationId ?? slug(`${method}-${pathKey}`);
  for (let n = 2; ids.has(id); n++) id = `${operationId ?? slug(`${method}-${pathKey}`)}-${n}`;
  ids.add(id);
  const summary = typeof operation.summary === 'string' ? operation.summary : undefined;
  const description = typeof operation.description === 'string' ? operation.description : undefined;

  return {
    id,
    method: method.toUpperCase() as ImportedOperation['method'],
    urlTemplate: pathKey,
    displayName: summary ?? operationId ?? `${method.toUpperCase()} ${pathKey}`,
    ...(description ? { description } : {}),
    templateParameters,
    queryParameters: of('query').map((parameter) => toParameter(document, dialect, parameter)),
    headerParameters,
    ...(dialect === 'swagger-2.0'
      ? swaggerBody(document, operation, parameters)
      : openapiBody(document, dialect, operation)),
    responses: responses(document, dialect, operation),
  };
}

function toParameter(document: Json, dialect: Dialect, parameter: Json): ImportedParameter {
  const schema = parameterSchema(document, dialect, parameter);
  const description = typeof parameter.description === 'string' ? parameter.description : undefined;
  const type = scalarType(schema);
  const saysMore = schema !== undefined && Object.keys(schema).some((key) => key !== 'type');
  return {
    name: String(parameter.name),
    ...(description ? { description } : {}),
    required: parameter.required === true,
    type,
    ...(saysMore || (schema !== undefined && schema.type !== type) ? { schema } : {}),
  };
}

/** Swagger 2.0 puts the schema keywords on the parameter itself; OpenAPI 3 in `schema` or `content`. */
function parameterSchema(document: Json, dialect: Dialect, parameter: Json): JsonSchema | undefined {
  if (dialect === 'swagger-2.0') {
    const keywords = Object.fromEntries(
      Object.entries(parameter).filter(([key]) => SWAGGER_PARAMETER_KEYWORDS.has(key)),
    );
    return Object.keys(keywords).length > 0 ? exportSchema(document, dialect, keywords) : undefined;
  }
  if (isObject(parameter.schema)) return exportSchema(document, dialect, parameter.schema);
  const media = isObject(parameter.content) ? Object.values(parameter.content)[0] : undefined;
  return isObject(media) && isObject(media.schema)
    ? exportSchema(document, dialect, media.schema)
    : undefined;
}

const SWAGGER_PARAMETER_KEYWORDS = new Set([
  'type',
  'format',
  'items',
  'enum',
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'multipleOf',
]);

function scalarType(schema: JsonSchema | undefined): ParameterType {
  const types = Array.isArray(schema?.type) ? schema.type : [schema?.type];
  const found = types.find((type) => type === 'integer' || type === 'number' || type === 'boolean');
  return (found as ParameterType | undefined) ?? 'string';
}

type BodyFields = Pick<
  ImportedOperation,
  'requestBody' | 'requestBodyRequired' | 'requestContentType' | 'requestContent'
>;

function openapiBody(document: Json, dialect: Dialect, operation: Json): BodyFields {
  const body = operation.requestBody;
  if (!isObject(body) || !isObject(body.content)) return {};
  const media = pickMediaType(Object.keys(body.content));
  if (media === undefined) return {};
  const content = body.content[media];
  const schema = isObject(content) && isObject(content.schema) ? content.schema : undefined;
  const requestContent = Object.entries(body.content).map(([contentType, value]) => ({
    contentType,
    ...(isObject(value) && isObject(value.schema)
      ? { schema: exportSchema(document, dialect, value.schema) }
      : {}),
  }));
  return {
    requestContent,
    ...(schema ? { requestBody: exportSchema(document, dialect, schema) } : {}),
    requestBodyRequired: body.required === true,
    requestContentType: media,
  };
}

function swaggerBody(document: Json, operation: Json, parameters: readonly Json[]): BodyFields {
  const consumes = asArray(operation.consumes ?? document.consumes).filter(
    (media): media is string => typeof media === 'string',
  );
  const body = parameters.find((parameter) => parameter.in === 'body');
  if (body && isObject(body.schema)) {
    const schema = exportSchema(document, 'swagger-2.0', body.schema);
    return {
      requestContent: (consumes.length > 0 ? consumes : ['application/json']).map((contentType) => ({
        contentType,
        schema,
      })),
      requestBody: schema,
      requestBodyRequired: body.required === true,
      requestContentType: pickMediaType(consumes) ?? 'application/json',
    };
  }
  const form = parameters.filter((parameter) => parameter.in === 'formData');
  if (form.length === 0) return {};
  const required = form.filter((parameter) => parameter.required === true).map((p) => String(p.name));
  return {
    requestBody: {
      type: 'object',
      properties: Object.fromEntries(
        form.map((parameter) => [
          String(parameter.name),
          {
            ...parameterSchema(document, 'swagger-2.0', parameter),
            ...(typeof parameter.description === 'string' ? { description: parameter.description } : {}),
          },
        ]),
      ),
      ...(required.length > 0 ? { required } : {}),
    },
    requestBodyRequired: required.length > 0,
    requestContentType: consumes.includes('multipart/form-data')
      ? 'multipart/form-data'
      : 'application/x-www-form-urlencoded',
  };
}

function responses(document: Json, dialect: Dialect, operation: Json): ImportedResponse[] {
  const all = isObject(operation.responses) ? operation.responses : {};
  const produces = asArray(operation.produces ?? document.produces).filter(
    (media): media is string => typeof media === 'string',
  );
  return Object.entries(all)
    .filter(([status]) => !status.startsWith('x-'))
    .map(([status, response]): ImportedResponse => {
      const value = isObject(response) ? response : {};
      const description = typeof value.description === 'string' ? value.description : undefined;
      let contentType: string | undefined;
      let schema: unknown;
      if (dialect === 'swagger-2.0') {
        schema = value.schema;
        if (isObject(schema)) contentType = pickMediaType(produces) ?? 'application/json';
      } else if (isObject(value.content)) {
        contentType = pickMediaType(Object.keys(value.content));
        const media = contentType === undefined ? undefined : value.content[contentType];
        schema = isObject(media) ? media.schema : undefined;
      }
      const content =
        dialect === 'swagger-2.0'
          ? swaggerResponseContent(document, value, produces)
          : openapiResponseContent(document, dialect, value);
      const headers = isObject(value.headers)
        ? Object.entries(value.headers)
            .filter(([, header]) => isObject(header))
            .map(([name, header]) => toParameter(document, dialect, { ...(header as Json), name }))
        : [];
      return {
        status,
        ...(description ? { description } : {}),
        ...(headers.length > 0 ? { headers } : {}),
        ...(contentType ? { contentType } : {}),
        ...(isObject(schema) ? { schema: exportSchema(document, dialect, schema) } : {}),
        ...(content.length > 0 ? { content } : {}),
      };
    });
}

/**
 * OpenAPI 3: each media type of the response, with its `example`, else the value of its first `examples` entry (an
 * `externalValue` is a URL, never fetched). The schema's own `example`s stay in the schema, for the sample.
 */
function openapiResponseContent(document: Json, dialect: Dialect, response: Json): ResponseContent[] {
  if (!isObject(response.content)) return [];
  return Object.entries(response.content).map(([contentType, media]) => {
    const value = isObject(media) ? media : {};
    const named = isObject(value.examples)
      ? Object.values(value.examples).find((entry) => isObject(entry) && 'value' in entry)
      : undefined;
    const example = 'example' in value ? value.example : isObject(named) ? named.value : undefined;
    return {
      contentType,
      ...(isObject(value.schema) ? { schema: exportSchema(document, dialect, value.schema) } : {}),
      ...(example === undefined ? {} : { example: structuredClone(example) }),
    };
  });
}

/**
 * Swagger 2.0: one schema for every media type the operation `produces`, and `examples` keyed by media type (a
 * media type with an example that `produces` does not list is kept too, after them).
 */
function swaggerResponseContent(
  document: Json,
  response: Json,
  produces: readonly string[],
): ResponseContent[] {
  const examples = isObject(response.examples) ? response.examples : {};
  const schema = isObject(response.schema)
    ? exportSchema(document, 'swagger-2.0', response.schema)
    : undefined;
  const types = [...produces, ...Object.keys(examples).filter((type) => !produces.includes(type))];
  if (types.length === 0 && schema) types.push('application/json');
  return types.map((contentType) => ({
    contentType,
    ...(schema ? { schema } : {}),
    ...(contentType in examples ? { example: structuredClone(examples[contentType]) } : {}),
  }));
}

/** JSON first (the MCP tools speak JSON), then forms, then whatever comes first. */
function pickMediaType(types: readonly string[]): string | undefined {
  const json = types.find((type) => /^application\/(?:[\w.-]+\+)?json\b/i.test(type));
  return (
    json ??
    types.find((type) => /^application\/x-www-form-urlencoded\b/i.test(type)) ??
    types.find((type) => /^multipart\/form-data\b/i.test(type)) ??
    types[0]
  );
}

// ---------------------------------------------------------------------------------------------------------
// Schemas: OpenAPI's dialects → JSON Schema 2020-12, self-contained

/** Keywords whose value is a schema, an array of schemas or a map of schemas. */
const SUBSCHEMA = new Set([
  'additionalProperties',
  'not',
  'contains',
  'if',
  'then',
  'else',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
]);
const SUBSCHEMA_ARRAY = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SUBSCHEMA_MAP = new Set([
  'properties',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'definitions',
]);
/** OpenAPI annotations with no meaning to a JSON Schema validator. */
const DROPPED = new Set(['discriminator', 'xml', 'externalDocs']);

/**
 * Copies `schema` as a standalone JSON Schema: OpenAPI 3.0 / Swagger 2.0 keywords rewritten (`nullable`,
 * `x-nullable`, `example`, boolean `exclusiveMinimum`, `type: file`), and circular references — which the
 * dereference leaves as `$ref` into the document — copied into `$defs` so the schema needs nothing else.
 */
export function exportSchema(document: Json, dialect: Dialect, schema: Json): JsonSchema {
  const defs = new Map<string, { name: string; schema: JsonSchema }>();
  const names = new Set<string>();

  const convertRef = (ref: string): JsonSchema => {
    let def = defs.get(ref);
    if (!def) {
      const base = (pointerTokens(ref).at(-1) ?? 'def').replace(/[^A-Za-z0-9_.-]/g, '_');
      let name = base;
      for (let n = 2; names.has(name); n++) name = `${base}_${n}`;
      names.add(name);
      def = { name, schema: {} };
      defs.set(ref, def);
      const target = resolvePointer(document, ref);
      def.schema = isObject(target) ? convert(target) : {};
    }
    return { $ref: `#/$defs/${def.name}` };
  };

  const convert = (node: Json): JsonSchema => {
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#')) return convertRef(node.$ref);
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node)) {
      if (DROPPED.has(key)) continue;
      if (SUBSCHEMA.has(key) && isObject(value)) out[key] = convert(value);
      else if (key === 'items') out[key] = Array.isArray(value) ? value.map(convertAny) : convertAny(value);
      else if (SUBSCHEMA_ARRAY.has(key) && Array.isArray(value)) out[key] = value.map(convertAny);
      else if (SUBSCHEMA_MAP.has(key) && isObject(value)) {
        out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, convertAny(sub)]));
      } else out[key] = structuredClone(value);
    }
    return dialect === 'openapi-3.1' ? out : legacyKeywords(out);
  };
  const convertAny = (node: unknown): unknown => (isObject(node) ? convert(node) : node);

  const root = convert(schema);
  if (defs.size === 0) return root;
  const existing = isObject(root.$defs) ? root.$defs : {};
  return {
    ...root,
    $defs: { ...existing, ...Object.fromEntries([...defs.values()].map((def) => [def.name, def.schema])) },
  };
}

function legacyKeywords(schema: JsonSchema): JsonSchema {
  const out = { ...schema };
  if (out.nullable === true || out['x-nullable'] === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
  }
  delete out.nullable;
  delete out['x-nullable'];
  if ('example' in out) {
    out.examples = [out.example];
    delete out.example;
  }
  if (out.type === 'file') {
    out.type = 'string';
    out.format = 'binary';
  }
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof out[flag] === 'boolean') {
      if (out[flag] === true && typeof out[bound] === 'number') {
        out[flag] = out[bound];
        delete out[bound];
      } else delete out[flag];
    }
  }
  return out;
}

function resolvePointer(document: unknown, ref: string): unknown {
  let node = document;
  for (const token of pointerTokens(ref)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else return undefined;
  }
  return node;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
