import type { ListToolsResult, Tool } from '@modelcontextprotocol/client';
import { ErrorCode, McpError } from '../protocol/jsonrpc.js';
import type { McpMethod } from '../protocol/method.js';
import { isGranted, toolDefinition } from '../tools/registry.js';
import { upstreamCaller } from '../upstream/caller.js';

/**
 * The cursor is the name of the last tool on the previous page (tools are sorted by name), so paging stays
 * correct when the catalog changes between pages: nothing is repeated, at worst a new tool is seen late.
 */
export function encodeCursor(lastName: string): string {
  return Buffer.from(lastName, 'utf8').toString('base64url');
}

function decodeCursor(cursor: unknown): string | undefined {
  if (cursor === undefined) return undefined;
  if (typeof cursor !== 'string' || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw new McpError(ErrorCode.InvalidParams, 'tools/list: invalid cursor');
  }
  const name = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
    throw new McpError(ErrorCode.InvalidParams, 'tools/list: invalid cursor');
  return name;
}

/**
 * How long a 2026-07-28 client may reuse a page (SEP-2549). Clients that listen for `tools/list_changed` learn of a
 * change at once; this bounds how stale a client that does not listen can be after a configuration reload.
 */
export const TOOLS_LIST_TTL_MS = 60_000;

/**
 * Lists only the tools the token's scopes grant (a tool outside them is not shown at all). The list depends on the
 * token, so its cache scope is `private`: a shared cache must not hand one caller's list to another.
 */
export const toolsList: McpMethod = {
  name: 'tools/list',
  kind: 'request',
  eras: ['session', 'stateless'],
  async handle(params, ctx): Promise<ListToolsResult> {
    const after = decodeCursor(params.cursor);
    // The upstream servers' tools (prefixed names) sort among the REST-API tools: one order, one cursor.
    const upstream = ctx.upstream ? await ctx.upstream.list(upstreamCaller(ctx)) : [];
    const candidates: { name: string; tool: () => Tool }[] = [
      ...ctx.tools
        .entries()
        .filter((entry) => isGranted(entry, ctx.subject.scopes))
        .map((entry) => ({ name: entry.name, tool: () => toolDefinition(entry, ctx.revision) })),
      ...upstream.map((entry) => ({ name: entry.name, tool: () => entry.definition })),
    ];
    if (upstream.length > 0) candidates.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const tools: Tool[] = [];
    let more = false;
    for (const candidate of candidates) {
      if (after !== undefined && candidate.name <= after) continue;
      if (tools.length === ctx.pageSize) {
        more = true;
        break;
      }
      tools.push(candidate.tool());
    }
    const result: ListToolsResult = { tools };
    if (more) result.nextCursor = encodeCursor(tools[tools.length - 1]!.name);
    if (ctx.revision.resultEnvelope) return { ...result, ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'private' };
    return result;
  },
};
