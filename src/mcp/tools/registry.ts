import type { Tool } from '@modelcontextprotocol/client';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Revision } from '../protocol/revisions.js';
import type { ToolCatalog, ToolOperation } from '../types.js';
import { assignToolNames } from './naming.js';
import { pathParameterProblems } from './request.js';
import {
  type ArgumentBinding,
  annotateMirroredArguments,
  buildToolInput,
  type MirroredArgument,
} from './schema.js';

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** A tool compiled once per catalog version; requests only read it. */
export interface ToolEntry {
  readonly name: string;
  readonly operation: ToolOperation;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly bindings: readonly ArgumentBinding[];
  /** Arguments a 2026-07-28 client mirrors into `Mcp-Param-*` headers, and the schema that says so. */
  readonly mirrored: readonly MirroredArgument[];
  readonly mirroredInputSchema: Readonly<Record<string, unknown>>;
  readonly readOnly: boolean;
  /** Any one of these scopes grants the tool (one per product the API is in). */
  readonly grantingScopes: readonly string[];
  readonly validate: (args: unknown) => readonly string[];
}

export function productScope(productId: string, readOnly: boolean): string {
  return `${readOnly ? 'read' : 'write'}:${productId}-work`;
}

function describe(op: ToolOperation): string {
  const parts: string[] = [];
  if (op.summary) parts.push(op.summary);
  if (op.description && op.description !== op.summary) parts.push(op.description);
  parts.push(`${op.method.toUpperCase()} ${op.urlTemplate} of the API "${op.apiName}".`);
  return parts.join('\n\n');
}

function formatErrors(errors: readonly ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const where = e.instancePath ? `argument ${e.instancePath.slice(1).replaceAll('/', '.')}` : 'arguments';
    if (e.keyword === 'additionalProperties') {
      return `${where}: unknown argument "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    }
    if (e.keyword === 'required') {
      return `${where}: missing required argument "${(e.params as { missingProperty: string }).missingProperty}"`;
    }
    return `${where} ${e.message ?? 'is invalid'}`;
  });
}

export interface ToolRegistryOptions {
  /** Called when an operation's schema cannot be compiled; the tool then validates only its argument names. */
  readonly warn?: (message: string) => void;
}

/**
 * The tools of the current catalog. Rebuilt (names, schemas, validators) whenever the catalog changes, then
 * listeners are told so sessions can send `notifications/tools/list_changed`.
 */
export class ToolRegistry {
  #entries: readonly ToolEntry[] = [];
  #byName = new Map<string, ToolEntry>();
  #scopes: readonly string[] = [];
  readonly #listeners = new Set<() => void>();
  readonly #unsubscribe: () => void;
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });

  constructor(
    private readonly catalog: ToolCatalog,
    private readonly options: ToolRegistryOptions = {},
  ) {
    this.#rebuild();
    this.#unsubscribe = catalog.onChange(() => {
      this.#rebuild();
      for (const listener of this.#listeners) listener();
    });
  }

  /** All tools, sorted by name. */
  entries(): readonly ToolEntry[] {
    return this.#entries;
  }

  find(name: string): ToolEntry | undefined {
    return this.#byName.get(name);
  }

  /** Every scope some tool needs, sorted: what the protected resource metadata advertises. */
  scopesSupported(): readonly string[] {
    return this.#scopes;
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  close(): void {
    this.#unsubscribe();
    this.#listeners.clear();
  }

  #rebuild(): void {
    const ops = this.catalog.operations().filter((op) => op.productIds.length > 0);
    const names = assignToolNames(ops);
    const entries: ToolEntry[] = [];
    const scopes = new Set<string>();
    for (const [op, name] of names) {
      const readOnly = SAFE_METHODS.has(op.method.toUpperCase());
      const grantingScopes = [...op.productIds].sort().map((p) => productScope(p, readOnly));
      for (const s of grantingScopes) scopes.add(s);
      const { inputSchema, bindings, mirrored } = buildToolInput(op);
      entries.push({
        name,
        operation: op,
        title: op.summary ?? `${op.method.toUpperCase()} ${op.urlTemplate}`,
        description: describe(op),
        inputSchema,
        bindings,
        mirrored,
        mirroredInputSchema: annotateMirroredArguments(inputSchema, mirrored),
        readOnly,
        grantingScopes,
        validate: this.#compile(name, op.urlTemplate, inputSchema, bindings),
      });
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.#entries = entries;
    this.#byName = new Map(entries.map((e) => [e.name, e]));
    this.#scopes = [...scopes].sort();
  }

  #compile(
    name: string,
    urlTemplate: string,
    schema: Readonly<Record<string, unknown>>,
    bindings: readonly ArgumentBinding[],
  ): (args: unknown) => readonly string[] {
    let validator: ValidateFunction;
    try {
      validator = this.#ajv.compile(schema);
    } catch (err) {
      // A parameter schema from an imported definition may use what Ajv cannot resolve (an external $ref):
      // keep the tool, and still refuse unknown and missing arguments.
      this.options.warn?.(`mcp: tool "${name}": input schema does not compile (${(err as Error).message})`);
      const fallback = {
        type: 'object',
        properties: Object.fromEntries(bindings.map((b) => [b.argument, {}])),
        required: (schema.required as string[] | undefined) ?? [],
        additionalProperties: false,
      };
      validator = this.#ajv.compile(fallback);
    }
    const textual = textualUrlArguments(schema, bindings);
    // Valid arguments may still lead out of the operation (a path parameter of ".."): refused the same way.
    return (args) => {
      const asText = withUrlText(args, textual);
      return validator(asText)
        ? pathParameterProblems(urlTemplate, bindings, asText as Record<string, unknown>)
        : formatErrors(validator.errors);
    };
  }
}

/**
 * The path and query arguments typed `string`: a client may send `2` or `true` for them (the Inspector's
 * `--tool-arg id=2` does), which becomes the same text in the URL, so they are checked as that text — against every
 * other rule of their schema (pattern, length, enum) — rather than refused for their JSON type.
 */
function textualUrlArguments(
  schema: Readonly<Record<string, unknown>>,
  bindings: readonly ArgumentBinding[],
): readonly string[] {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  return bindings
    .filter(
      (b) =>
        (b.location === 'template' || b.location === 'query') && properties[b.argument]?.type === 'string',
    )
    .map((b) => b.argument);
}

/** The arguments with each number or boolean among `textual` replaced by its text (the caller's object untouched). */
function withUrlText(args: unknown, textual: readonly string[]): unknown {
  if (textual.length === 0 || typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const record = args as Record<string, unknown>;
  const convert = textual.filter(
    (name) => typeof record[name] === 'number' || typeof record[name] === 'boolean',
  );
  if (convert.length === 0) return args;
  return { ...record, ...Object.fromEntries(convert.map((name) => [name, String(record[name])])) };
}

/** The tool as `tools/list` shows it in one protocol revision. */
export function toolDefinition(entry: ToolEntry, revision: Revision): Tool {
  const tool: Tool = {
    name: entry.name,
    description: entry.description,
    inputSchema: (revision.parameterHeaders
      ? entry.mirroredInputSchema
      : entry.inputSchema) as Tool['inputSchema'],
  };
  if (revision.titlesAndStructuredContent) tool.title = entry.title;
  if (revision.toolAnnotations) {
    const method = entry.operation.method.toUpperCase();
    tool.annotations = {
      title: entry.title,
      readOnlyHint: entry.readOnly,
      destructiveHint: method === 'DELETE',
      idempotentHint: entry.readOnly || method === 'PUT' || method === 'DELETE',
      openWorldHint: true,
    };
  }
  return tool;
}

/** True when one of the token's scopes grants the tool. */
export function isGranted(entry: ToolEntry, scopes: readonly string[]): boolean {
  return entry.grantingScopes.some((s) => scopes.includes(s));
}
