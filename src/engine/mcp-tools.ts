import { toolMatcher } from '../config/mcp-servers.js';
import type { GatewayConfig } from '../config/schema.js';
import type { FinalResponse } from '../policy/index.js';

/**
 * An MCP server API's tool filter (`mcp.tools`) at its own URL, `/<urlSuffix>/mcp`, as `/v1/mcp` applies it: a tool
 * not exposed is neither listed nor callable. The engine reads each POST's JSON-RPC body (it is small) before any
 * policy: a `tools/call` of a hidden tool is answered here with JSON-RPC -32602 `Unknown tool`, as the server answers
 * a tool it does not have, and never reaches the server; the answer to a `tools/list` is held whole (JSON, or the
 * POST's own SSE stream, which ends with its answer) and the hidden tools are taken out of it.
 */
export interface McpToolFilter {
  /** What one POST body asks of the server: a refusal, or the ids of its `tools/list` requests (answers to filter). */
  inspect(body: Buffer): McpInspection;
  /** The answer to a POST that listed tools, without the hidden ones; undefined when nothing was taken out. */
  reshape(body: Buffer, contentType: string, listIds: ReadonlySet<string>): Buffer | undefined;
}

export type McpInspection =
  | { readonly kind: 'refused'; readonly response: FinalResponse }
  | { readonly kind: 'pass'; readonly listIds: ReadonlySet<string> };

/** The filter of each MCP API that has `mcp.tools` (by API id); an API without one shows every tool. */
export function mcpToolFiltersOf(config: Pick<GatewayConfig, 'apis'>): ReadonlyMap<string, McpToolFilter> {
  const filters = new Map<string, McpToolFilter>();
  for (const api of config.apis)
    if (api.type === 'mcp' && api.mcp?.tools) filters.set(api.id, toolFilter(toolMatcher(api.mcp.tools)));
  return filters;
}

type Message = Record<string, unknown>;

function toolFilter(exposes: (name: string) => boolean): McpToolFilter {
  const shown = (tool: unknown) => isObject(tool) && typeof tool.name === 'string' && exposes(tool.name);
  /** A response to one of the listings, with the hidden tools out; the same object when none was hidden. */
  const filtered = (message: unknown, listIds: ReadonlySet<string>): unknown => {
    if (!isObject(message) || !listIds.has(idKey(message.id)) || !isObject(message.result)) return message;
    const tools = message.result.tools;
    if (!Array.isArray(tools) || tools.every(shown)) return message;
    return { ...message, result: { ...message.result, tools: tools.filter(shown) } };
  };
  return {
    inspect(body) {
      const parsed = parseJson(body.toString('utf8'));
      // Not JSON-RPC: the server answers it (with its own error); nothing of a tool can be in it.
      if (parsed === undefined) return { kind: 'pass', listIds: new Set() };
      const messages = (Array.isArray(parsed) ? parsed : [parsed]).filter(isObject);
      const hidden = messages.find(
        (m) =>
          m.method === 'tools/call' &&
          isObject(m.params) &&
          typeof m.params.name === 'string' &&
          !exposes(m.params.name),
      );
      if (hidden) return { kind: 'refused', response: unknownTool(hidden, Array.isArray(parsed)) };
      const listIds = new Set(messages.filter((m) => m.method === 'tools/list').map((m) => idKey(m.id)));
      return { kind: 'pass', listIds };
    },
    reshape(body, contentType, listIds) {
      const text = body.toString('utf8');
      if (contentType.toLowerCase().startsWith('text/event-stream'))
        return reshapeEvents(text, listIds, filtered);
      const parsed = parseJson(text);
      if (parsed === undefined) return undefined;
      const next = Array.isArray(parsed)
        ? parsed.map((m) => filtered(m, listIds))
        : filtered(parsed, listIds);
      const changed = Array.isArray(parsed)
        ? parsed.some((m, i) => m !== (next as unknown[])[i])
        : next !== parsed;
      return changed ? Buffer.from(JSON.stringify(next)) : undefined;
    },
  };
}

/**
 * The events of an SSE answer, each `message` whose data is a listing's answer rewritten (as one `data:` line); the
 * other events and every other field (`id:`, `event:`, comments) kept as they were.
 */
function reshapeEvents(
  text: string,
  listIds: ReadonlySet<string>,
  filtered: (message: unknown, listIds: ReadonlySet<string>) => unknown,
): Buffer | undefined {
  let changed = false;
  const events = text.split(/(\r\n\r\n|\n\n|\r\r)/);
  for (let i = 0; i < events.length; i += 2) {
    const lines = events[i]!.split(/\r\n|\n|\r/);
    const data = lines
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''));
    if (data.length === 0) continue;
    const message = parseJson(data.join('\n'));
    const next = filtered(message, listIds);
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
