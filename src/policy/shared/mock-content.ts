/**
 * What mock-response answers with, from the responses the operation's definition declares. API Management's rule
 * (learn.microsoft.com/azure/api-management/mock-response-policy): the response of the policy's status code, the
 * media type the policy names or else the first one declared; its example when there is one, else a sample
 * generated from its schema, else no content.
 *
 * The documentation does not say how the sample is made; this one is deterministic (the same schema always gives
 * the same body): a value the schema itself offers first (`const`, `examples`, `default`, the first of `enum`), else
 * every declared property of an object, one item of an array, and a fixed placeholder for each scalar type.
 */

/** A media type of a declared response (the catalog's ImportedResponse content, src/catalog/importers/model.ts). */
export interface DeclaredContent {
  readonly contentType: string;
  readonly schema?: Readonly<Record<string, unknown>> | undefined;
  readonly example?: unknown;
}

/** A response the operation's definition declares: `200`, `4XX` or `default`, and its media types. */
export interface DeclaredResponse {
  readonly status: string;
  readonly content?: readonly DeclaredContent[] | undefined;
}

export interface MockContent {
  /** The media type the content is of; undefined when the response declares none (and the policy names none). */
  readonly contentType: string | undefined;
  /** Empty when neither an example nor a schema is found. */
  readonly body: string;
}

/**
 * The declared response for `status`: the exact code, else its class (`2XX`), else `default` — the order in which
 * OpenAPI says a response code is covered.
 */
export function declaredResponse(
  responses: readonly DeclaredResponse[],
  status: number,
): DeclaredResponse | undefined {
  const code = String(status);
  const range = `${code[0]}XX`;
  return (
    responses.find((response) => response.status === code) ??
    responses.find((response) => response.status.toUpperCase() === range) ??
    responses.find((response) => response.status === 'default')
  );
}

const generated = new WeakMap<DeclaredContent, string>();

/** The mocked content for `status` (and the policy's `content-type`, when it names one). */
export function mockContent(
  responses: readonly DeclaredResponse[],
  status: number,
  contentType: string | undefined,
): MockContent {
  const declared = declaredResponse(responses, status)?.content ?? [];
  const content =
    contentType === undefined
      ? declared[0]
      : declared.find((entry) => mediaType(entry.contentType) === mediaType(contentType));
  if (!content) return { contentType, body: '' };
  let body = generated.get(content);
  if (body === undefined) {
    body = contentBody(content);
    generated.set(content, body);
  }
  return { contentType: contentType ?? content.contentType, body };
}

/** `application/json; charset=utf-8` → `application/json`. */
function mediaType(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase();
}

function isJson(contentType: string): boolean {
  return (
    /^application\/(?:[\w.-]+\+)?json$/.test(mediaType(contentType)) || mediaType(contentType) === 'text/json'
  );
}

function contentBody(content: DeclaredContent): string {
  const json = isJson(content.contentType);
  if (content.example !== undefined) {
    // A text or XML example is written in the definition as a string: it is the body itself.
    if (typeof content.example === 'string' && !json) return content.example;
    return JSON.stringify(content.example);
  }
  if (content.schema === undefined) return '';
  const sample = schemaSample(content.schema);
  if (json) return JSON.stringify(sample);
  // A schema says nothing of how XML or other media types spell the value: only a plain text sample is made.
  return typeof sample === 'string' && mediaType(content.contentType).startsWith('text/') ? sample : '';
}

type Schema = Readonly<Record<string, unknown>>;

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Placeholders by `format`, then by type. */
const STRING_FORMATS: Readonly<Record<string, string>> = {
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '00:00:00Z',
  email: 'user@example.com',
  uri: 'https://example.com',
  url: 'https://example.com',
  uuid: '00000000-0000-0000-0000-000000000000',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  byte: 'c3RyaW5n',
};

/**
 * A sample value of a JSON Schema (the catalog keeps 2020-12: `$defs`, `examples`, type arrays). `$ref`s into the
 * schema's own `$defs` are followed; a reference already being expanded (a recursive schema) stops as null, and so
 * does nesting past a depth no real response needs.
 */
export function schemaSample(root: Schema): unknown {
  const defs = isSchema(root.$defs) ? root.$defs : {};
  const sample = (schema: Schema, expanding: ReadonlySet<string>, depth: number): unknown => {
    if (depth > 32) return null;
    if (typeof schema.$ref === 'string') {
      const name = /^#\/\$defs\/(.+)$/.exec(schema.$ref)?.[1];
      const target = name === undefined ? undefined : defs[decodePointer(name)];
      if (!isSchema(target) || expanding.has(schema.$ref)) return null;
      return sample(target, new Set([...expanding, schema.$ref]), depth + 1);
    }
    if ('const' in schema) return schema.const;
    if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
    if ('example' in schema) return schema.example;
    if ('default' in schema) return schema.default;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
    const next = (sub: unknown) => (isSchema(sub) ? sample(sub, expanding, depth + 1) : null);
    if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
      // Every part applies: the object parts' samples are merged, a scalar part decides alone.
      const parts = schema.allOf.map(next);
      // Keywords beside allOf that describe a value too (properties, type) are one more part.
      const { allOf: _, $defs: __, title: ___, description: ____, ...rest } = schema;
      if (Object.keys(rest).length > 0) parts.push(sample(rest, expanding, depth + 1));
      const values = parts.filter((part) => part !== null);
      return values.length > 0 && values.every(isSchema) ? Object.assign({}, ...values) : (values[0] ?? null);
    }
    for (const key of ['oneOf', 'anyOf'] as const) {
      const choices = schema[key];
      if (Array.isArray(choices) && choices.length > 0) return next(choices[0]);
    }
    switch (typeOf(schema)) {
      case 'object': {
        const properties = isSchema(schema.properties) ? schema.properties : {};
        return Object.fromEntries(Object.entries(properties).map(([name, sub]) => [name, next(sub)]));
      }
      case 'array': {
        const items = Array.isArray(schema.prefixItems) ? schema.prefixItems.map(next) : [];
        return isSchema(schema.items) ? [...items, next(schema.items)] : items;
      }
      case 'string':
        return (typeof schema.format === 'string' && STRING_FORMATS[schema.format]) || 'string';
      case 'integer':
      case 'number':
        return typeof schema.minimum === 'number' ? schema.minimum : 0;
      case 'boolean':
        return true;
      default:
        return null;
    }
  };
  return sample(root, new Set(), 0);
}

/** The schema's type: the first that is not `null` of a type array; an object when it only has properties. */
function typeOf(schema: Schema): string | undefined {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((candidate) => typeof candidate === 'string' && candidate !== 'null');
  if (typeof type === 'string') return type;
  if (isSchema(schema.properties)) return 'object';
  if (schema.items !== undefined || schema.prefixItems !== undefined) return 'array';
  return types.includes('null') ? 'null' : undefined;
}

function decodePointer(token: string): string {
  return decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~');
}
