import type { ToolOperation, ToolParameter } from '../types.js';

export type ArgumentLocation = 'template' | 'query' | 'header' | 'body';

/** Where one tool argument goes in the HTTP request. */
export interface ArgumentBinding {
  readonly argument: string;
  readonly location: ArgumentLocation;
  /** The parameter's own name (template variable, query key, header name). */
  readonly name: string;
  /** `{*path}` template variables keep their slashes. */
  readonly wildcard: boolean;
}

/** A tool argument mirrored into an `Mcp-Param-<header>` request header (SEP-2243, `x-mcp-header`). */
export interface MirroredArgument {
  readonly argument: string;
  /** The `x-mcp-header` value: the client sends the argument as `Mcp-Param-<header>`. */
  readonly header: string;
  readonly type: 'string' | 'integer' | 'boolean';
}

export interface ToolInput {
  /** JSON Schema 2020-12 (the MCP default dialect, so no `$schema` keyword is needed). */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly bindings: readonly ArgumentBinding[];
  /** The operation's header parameters a 2026-07-28 client mirrors into `Mcp-Param-*` headers. */
  readonly mirrored: readonly MirroredArgument[];
}

/**
 * Headers a tool must not let its caller set: the gateway caller owns credentials and framing, and MCP's own
 * headers mean something else here.
 */
const RESERVED_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'te',
  'upgrade',
  'mcp-session-id',
  'mcp-protocol-version',
]);

/** RFC 9110 `token`: what an `x-mcp-header` value must be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MIRRORABLE_TYPES = new Set(['string', 'integer', 'boolean']);

const TEMPLATE_VARIABLE = /\{(\*?)([^{}]+)\}/g;

/** Template variables that appear in the URL but were not declared: each becomes a required string. */
function undeclaredTemplateVariables(op: ToolOperation): ToolParameter[] {
  const declared = new Set(op.templateParameters.map((p) => p.name));
  const extra: ToolParameter[] = [];
  for (const match of op.urlTemplate.matchAll(TEMPLATE_VARIABLE)) {
    const name = match[2]!;
    if (!declared.has(name)) {
      declared.add(name);
      extra.push({ name, required: true });
    }
  }
  return extra;
}

function wildcardVariables(op: ToolOperation): Set<string> {
  const names = new Set<string>();
  for (const match of op.urlTemplate.matchAll(TEMPLATE_VARIABLE)) if (match[1] === '*') names.add(match[2]!);
  return names;
}

function parameterSchema(param: ToolParameter, where: string): Record<string, unknown> {
  const schema: Record<string, unknown> = { ...(param.schema ?? { type: 'string' }) };
  const description = param.description ? `${param.description} (${where})` : `${where}`;
  if (typeof schema.description !== 'string') schema.description = description;
  return schema;
}

/**
 * Builds the tool's arguments: one flat object whose properties are the template, query and header parameters
 * and `body`. Flat arguments are what models fill most reliably; when two parameters share a name, the later
 * location gets a prefix (`query_id`, `header_id`) so no argument is lost.
 */
export function buildToolInput(op: ToolOperation): ToolInput {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const bindings: ArgumentBinding[] = [];
  const wildcards = wildcardVariables(op);

  const add = (param: ToolParameter, location: Exclude<ArgumentLocation, 'body'>, where: string) => {
    let argument = param.name;
    if (argument in properties) argument = `${location}_${param.name}`;
    let n = 2;
    while (argument in properties) argument = `${location}_${param.name}_${n++}`;
    properties[argument] = parameterSchema(param, where);
    // Template variables are always required: the URL cannot be built without them.
    if (param.required || location === 'template') required.push(argument);
    bindings.push({ argument, location, name: param.name, wildcard: wildcards.has(param.name) });
  };

  for (const p of [...op.templateParameters, ...undeclaredTemplateVariables(op)]) {
    add(p, 'template', `path parameter {${p.name}}`);
  }
  for (const p of op.queryParameters) add(p, 'query', `query parameter "${p.name}"`);
  for (const p of op.headerParameters) {
    if (!RESERVED_HEADERS.has(p.name.toLowerCase())) add(p, 'header', `request header "${p.name}"`);
  }
  if (op.requestBodySchema) {
    let argument = 'body';
    let n = 2;
    while (argument in properties) argument = `body_${n++}`;
    properties[argument] = { description: 'JSON request body', ...op.requestBodySchema };
    if (op.requestBodyRequired) required.push(argument);
    bindings.push({ argument, location: 'body', name: 'body', wildcard: false });
  }

  const inputSchema: Record<string, unknown> = { type: 'object', properties, additionalProperties: false };
  if (required.length > 0) inputSchema.required = required;
  return { inputSchema, bindings, mirrored: mirroredArguments(properties, bindings) };
}

/**
 * The header parameters whose value a client can mirror (SEP-2243): the operation's own header name becomes the
 * `x-mcp-header` value, so a proxy in front of the gateway sees `Mcp-Param-X-Trace` for the backend's `X-Trace`.
 * Only what the spec permits is annotated — a string, integer or boolean (not `number`), a token name, unique
 * case-insensitively — since a client drops a tool with an invalid annotation; the others stay unannotated.
 */
function mirroredArguments(
  properties: Readonly<Record<string, unknown>>,
  bindings: readonly ArgumentBinding[],
): MirroredArgument[] {
  const mirrored: MirroredArgument[] = [];
  const taken = new Set<string>();
  for (const binding of bindings) {
    if (binding.location !== 'header') continue;
    const type = (properties[binding.argument] as { type?: unknown }).type;
    const header = binding.name;
    if (typeof type !== 'string' || !MIRRORABLE_TYPES.has(type)) continue;
    if (!TOKEN.test(header) || taken.has(header.toLowerCase())) continue;
    taken.add(header.toLowerCase());
    mirrored.push({ argument: binding.argument, header, type: type as MirroredArgument['type'] });
  }
  return mirrored;
}

/** The input schema with each mirrored argument's `x-mcp-header` annotation: what a 2026-07-28 client sees. */
export function annotateMirroredArguments(
  inputSchema: Readonly<Record<string, unknown>>,
  mirrored: readonly MirroredArgument[],
): Readonly<Record<string, unknown>> {
  if (mirrored.length === 0) return inputSchema;
  const properties = { ...(inputSchema.properties as Record<string, Record<string, unknown>>) };
  for (const { argument, header } of mirrored) {
    properties[argument] = { ...properties[argument], 'x-mcp-header': header };
  }
  return { ...inputSchema, properties };
}
