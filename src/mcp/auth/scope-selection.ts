/**
 * The scopes a 401 challenge asks for: what the request at hand needs (MCP authorization 2025-11-25, "Scope
 * Selection Strategy": the client requests the challenge's `scope`, so the server names the minimal set for the
 * operation, and asks for more later with 403 `insufficient_scope`). Asking for every scope would make every SDK
 * client request write access for a read-only use.
 *
 * - `tools/call` of a known tool: the scope that grants that tool (`read:` for a safe method, `write:` otherwise);
 * - anything else (initialize, tools/list, the GET stream, a tool the registry does not know): the read scopes, which
 *   list and call the read-only tools; a write tool is then a step up when it is called;
 * - when no tool is read-only (no `read:` scope exists): every scope, as before.
 */

import type { ToolRegistry } from '../tools/registry.js';

type Tools = Pick<ToolRegistry, 'find' | 'scopesSupported'>;

export function challengeScopes(body: Buffer | undefined, tools: Tools): readonly string[] {
  const called = calledTools(body);
  const needed = new Set<string>();
  for (const name of called) {
    const scope = tools.find(name)?.grantingScopes[0];
    if (scope) needed.add(scope);
  }
  if (needed.size > 0) return [...needed].sort();
  const supported = tools.scopesSupported();
  const read = supported.filter((scope) => scope.startsWith('read:'));
  return read.length > 0 ? read : supported;
}

/** The tool names of the `tools/call` requests in a POST body (one message or a batch); none when it is not JSON. */
function calledTools(body: Buffer | undefined): string[] {
  if (!body || body.length === 0) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return [];
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  return messages.flatMap((message) => {
    if (typeof message !== 'object' || message === null) return [];
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
    return method === 'tools/call' && typeof params?.name === 'string' ? [params.name] : [];
  });
}
