import { mcpResourceUrl, toolMatcher } from '../config/mcp-servers.js';
import type { GatewayConfig } from '../config/schema.js';
import type { FinalResponse } from '../policy/index.js';
import type { McpToolHints } from './mcp-tool-hints.js';

/**
 * An MCP server API's tool rules at its own URL, `/<urlSuffix>/mcp`, as `/v1/mcp` applies them: a tool not exposed
 * (`mcp.tools`) is neither listed nor callable, and with `auth` a tool the token's scopes do not grant
 * (`mcp.writeTools`: write does not imply read) is listed, but calling it is 403 `insufficient_scope` with the
 * step-up challenge `/v1/mcp` sends (the listing stays whole: the service's own listing through this URL, with the
 * user's scopes, is what lets `/v1/mcp` answer a call of a listed tool with that step-up too). The engine reads each
 * POST's JSON-RPC body (it is small) before any policy: a `tools/call` of a hidden tool is answered here with JSON-RPC
 * -32602 `Unknown tool`, as the server answers a tool it does not have, and never reaches the server; the answer to a
 * `tools/list` is held whole (JSON, or the POST's own SSE stream, which ends with its answer) and the hidden tools
 * are taken out of it.
 */
export interface McpToolFilter {
  /** True when some tool is hidden from every caller (`mcp.tools`); else the rules apply only with a token. */
  readonly hides: boolean;
  /**
   * Before `inspect`, with `mcp.writeTools: annotations`: the hints other engine processes learned for the tools the
   * body calls that this process has seen in no listing yet.
   */
  recall(body: Buffer): Promise<void>;
  /**
   * What one POST body asks of the server: a refusal, or the ids of its `tools/list` requests (answers to filter).
   * `granted`: the token's scopes, when the authorization server checked one.
   */
  inspect(body: Buffer, granted?: readonly string[]): McpInspection;
  /**
   * The answer to a POST that listed tools, without the hidden ones; undefined when nothing was taken out. With
   * annotations, the write rule learns each tool's `readOnlyHint` here.
   */
  reshape(body: Buffer, contentType: string, listIds: ReadonlySet<string>): Buffer | undefined;
}

export type McpInspection =
  | { readonly kind: 'refused'; readonly response: FinalResponse }
  | { readonly kind: 'pass'; readonly listIds: ReadonlySet<string> };

/**
 * The rules of each MCP API (by API id) that hides tools or, with `auth`, is in a product (whose scopes the write
 * rule asks for); an API with neither shows every tool to everyone.
 */
export function mcpToolFiltersOf(
  config: Pick<GatewayConfig, 'apis'> & Partial<Pick<GatewayConfig, 'products' | 'auth'>>,
  hints?: McpToolHints,
): ReadonlyMap<string, McpToolFilter> {
  const filters = new Map<string, McpToolFilter>();
  for (const api of config.apis) {
    if (api.type !== 'mcp') continue;
    const productIds = (config.products ?? []).filter((p) => p.apis.includes(api.id)).map((p) => p.id);
    const writeRule =
      config.auth && productIds.length > 0 ? writeRuleOf(api, productIds, config.auth) : undefined;
    if (!api.mcp?.tools && !writeRule) continue;
    const exposes = api.mcp?.tools ? toolMatcher(api.mcp.tools) : undefined;
    const learned = writeRule && !writeRule.listed && hints ? sharedHints(api.id, hints) : undefined;
    filters.set(api.id, toolFilter(exposes, writeRule, learned));
  }
  return filters;
}

/** A product's scope, as the MCP endpoint names it (mcp/tools/registry.ts, which the engine may not import). */
function productScope(productId: string, readOnly: boolean): string {
  return `${readOnly ? 'read' : 'write'}:${productId}-work`;
}

/** `mcp.writeTools` at the own URL: which scope each tool needs, and the step-up challenge's resource metadata. */
interface WriteRule {
  readonly productIds: readonly string[];
  /** By name alone (a list), or by the `readOnlyHint` the engine saw in the server's last listing. */
  readonly listed: ((name: string) => boolean) | undefined;
  readonly metadata: string;
}

function writeRuleOf(
  api: GatewayConfig['apis'][number],
  productIds: readonly string[],
  auth: NonNullable<GatewayConfig['auth']>,
): WriteRule {
  const writeTools = api.mcp?.writeTools ?? 'annotations';
  const resource = new URL(mcpResourceUrl(auth.baseUrl, api.urlSuffix));
  return {
    productIds: [...productIds].sort(),
    listed: writeTools === 'annotations' ? undefined : toolMatcher(writeTools),
    metadata: `${resource.origin}/.well-known/oauth-protected-resource${resource.pathname}`,
  };
}

type Message = Record<string, unknown>;

/** One API's part of the shared hints. */
interface ApiHints {
  get(tool: string): Promise<boolean | undefined>;
  set(tool: string, readOnly: boolean): void;
}

function sharedHints(apiId: string, hints: McpToolHints): ApiHints {
  return { get: (tool) => hints.get(apiId, tool), set: (tool, readOnly) => hints.set(apiId, tool, readOnly) };
}

/** The names of the tools a POST body calls. */
function calledTools(body: Buffer): string[] {
  const parsed = parseJson(body.toString('utf8'));
  if (parsed === undefined) return [];
  return (Array.isArray(parsed) ? parsed : [parsed])
    .filter(isObject)
    .filter((m) => m.method === 'tools/call' && isObject(m.params) && typeof m.params.name === 'string')
    .map((m) => (m.params as Message).name as string);
}

function toolFilter(
  exposes: ((name: string) => boolean) | undefined,
  write: WriteRule | undefined,
  shared: ApiHints | undefined,
): McpToolFilter {
  /**
   * With annotations, whether each tool is read-only, as the server's last listing through this engine said: a tool
   * not seen yet counts as a write tool (only a tool the server marks read-only is a read tool, as in `/v1/mcp`).
   */
  const readOnly = new Map<string, boolean>();
  const needsWrite = (name: string) => (write?.listed ? write.listed(name) : readOnly.get(name) !== true);
  const grants = (name: string, granted: readonly string[] | undefined) =>
    !write ||
    granted === undefined ||
    write.productIds.some((p) => granted.includes(productScope(p, !needsWrite(name))));
  const shown = (tool: unknown) =>
    isObject(tool) && typeof tool.name === 'string' && (exposes?.(tool.name) ?? true);
  /** A response to one of the listings, with the hidden tools out; the same object when none was taken out. */
  const filtered = (message: unknown, listIds: ReadonlySet<string>): unknown => {
    if (!isObject(message) || !listIds.has(idKey(message.id)) || !isObject(message.result)) return message;
    const tools = message.result.tools;
    if (!Array.isArray(tools)) return message;
    if (write && !write.listed)
      for (const tool of tools)
        if (isObject(tool) && typeof tool.name === 'string') {
          const hint = isObject(tool.annotations) && tool.annotations.readOnlyHint === true;
          readOnly.set(tool.name, hint);
          shared?.set(tool.name, hint);
        }
    if (tools.every(shown)) return message;
    return { ...message, result: { ...message.result, tools: tools.filter(shown) } };
  };
  return {
    hides: exposes !== undefined,
    async recall(body) {
      if (!shared) return;
      for (const name of calledTools(body)) {
        if (readOnly.has(name)) continue;
        const hint = await shared.get(name);
        if (hint !== undefined && !readOnly.has(name)) readOnly.set(name, hint);
      }
    },
    inspect(body, granted) {
      const parsed = parseJson(body.toString('utf8'));
      // Not JSON-RPC: the server answers it (with its own error); nothing of a tool can be in it.
      if (parsed === undefined) return { kind: 'pass', listIds: new Set() };
      const messages = (Array.isArray(parsed) ? parsed : [parsed]).filter(isObject);
      const calls = messages.filter(
        (m) => m.method === 'tools/call' && isObject(m.params) && typeof m.params.name === 'string',
      );
      const name = (m: Message) => (m.params as Message).name as string;
      const hidden = exposes && calls.find((m) => !exposes(name(m)));
      if (hidden) return { kind: 'refused', response: unknownTool(hidden, Array.isArray(parsed)) };
      const ungranted = write && calls.find((m) => !grants(name(m), granted));
      if (write && ungranted) {
        const missing = productScope(write.productIds[0]!, !needsWrite(name(ungranted)));
        const id = Array.isArray(parsed) ? null : (ungranted.id ?? null);
        return { kind: 'refused', response: insufficientScope(write, missing, granted ?? [], id) };
      }
      const listIds = new Set(messages.filter((m) => m.method === 'tools/list').map((m) => idKey(m.id)));
      return { kind: 'pass', listIds };
    },
    reshape(body, contentType, listIds) {
      const text = body.toString('utf8');
      const one = (message: unknown) => filtered(message, listIds);
      if (contentType.toLowerCase().startsWith('text/event-stream')) return reshapeEvents(text, one);
      const parsed = parseJson(text);
      if (parsed === undefined) return undefined;
      const next = Array.isArray(parsed) ? parsed.map(one) : one(parsed);
      const changed = Array.isArray(parsed)
        ? parsed.some((m, i) => m !== (next as unknown[])[i])
        : next !== parsed;
      return changed ? Buffer.from(JSON.stringify(next)) : undefined;
    },
  };
}

/**
 * 403 for a call the token's scopes do not grant, as `/v1/mcp` answers it (mcp/transport/refusals.ts, mcp/koa.ts):
 * a JSON-RPC error, and a challenge asking for the missing scope plus those of this API the token has, so a client
 * that replaces its scope on step-up keeps its other tools.
 */
function insufficientScope(
  write: WriteRule,
  missing: string,
  granted: readonly string[],
  id: unknown,
): FinalResponse {
  const own = write.productIds.flatMap((p) => [productScope(p, true), productScope(p, false)]);
  const scope = [...new Set([...granted.filter((s) => own.includes(s)), missing])].join(' ');
  const challenge =
    `Bearer error="insufficient_scope", error_description="This call requires scope ${missing}", ` +
    `scope="${scope}", resource_metadata="${write.metadata}"`;
  const body = {
    jsonrpc: '2.0',
    id,
    error: { code: -32000, message: `Forbidden: the access token lacks scope ${missing}` },
  };
  return {
    status: 403,
    reason: 'Forbidden',
    headers: [
      ['content-type', 'application/json'],
      ['www-authenticate', challenge],
    ],
    body: Buffer.from(JSON.stringify(body)),
    bodyChanged: true,
  };
}

/**
 * The events of an SSE answer, each `message` whose data is a listing's answer rewritten (as one `data:` line); the
 * other events and every other field (`id:`, `event:`, comments) kept as they were.
 */
function reshapeEvents(text: string, filtered: (message: unknown) => unknown): Buffer | undefined {
  let changed = false;
  const events = text.split(/(\r\n\r\n|\n\n|\r\r)/);
  for (let i = 0; i < events.length; i += 2) {
    const lines = events[i]!.split(/\r\n|\n|\r/);
    const data = lines
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''));
    if (data.length === 0) continue;
    const message = parseJson(data.join('\n'));
    const next = filtered(message);
    if (message === undefined || next === message) continue;
    changed = true;
    const first = lines.findIndex((line) => line.startsWith('data:'));
    const kept = lines.filter((line, at) => at === first || !line.startsWith('data:'));
    kept[kept.indexOf(lines[first]!)] = `data: ${JSON.stringify(next)}`;
    events[i] = kept.join('\n');
  }
  return changed ? Buffer.from(events.join('')) : undefined;
}

/** As the server answers a tool it does not have; a batch (2025-03-26) with one such call is refused whole. */
function unknownTool(call: Message, batch: boolean): FinalResponse {
  const name = (call.params as Message).name as string;
  const error = { code: -32602, message: `Unknown tool: ${name}` };
  const body = batch
    ? { jsonrpc: '2.0', id: null, error: { ...error, message: `${error.message} (the batch was not run)` } }
    : { jsonrpc: '2.0', id: call.id ?? null, error };
  return {
    status: batch ? 400 : 200,
    reason: batch ? 'Bad Request' : 'OK',
    headers: [['content-type', 'application/json']],
    body: Buffer.from(JSON.stringify(body)),
    bodyChanged: true,
  };
}

/** A JSON-RPC id as a key: `7` and `"7"` are different ids. */
function idKey(id: unknown): string {
  return `${typeof id}:${String(id)}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
