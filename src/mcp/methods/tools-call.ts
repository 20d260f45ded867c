import type { CallToolResult } from '@modelcontextprotocol/client';
import { errorFields } from '../../log.js';
import { ErrorCode, McpError, type Params } from '../protocol/jsonrpc.js';
import type { McpMethod, MethodContext } from '../protocol/method.js';
import { isGranted, type ToolEntry } from '../tools/registry.js';
import { buildToolCallRequest } from '../tools/request.js';
import { toToolResult } from '../tools/result.js';
import type { UpstreamCallRelay, UpstreamProgress } from '../upstream/aggregator.js';
import { upstreamCaller } from '../upstream/caller.js';

function readName(params: Params): string {
  if (typeof params.name !== 'string')
    throw new McpError(ErrorCode.InvalidParams, 'tools/call: "name" must be a string');
  return params.name;
}

function readArguments(params: Params): Record<string, unknown> {
  const args = params.arguments ?? {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new McpError(ErrorCode.InvalidParams, 'tools/call: "arguments" must be an object');
  }
  return args as Record<string, unknown>;
}

function unknownTool(name: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

async function call(
  entry: ToolEntry,
  args: Record<string, unknown>,
  ctx: MethodContext,
): Promise<CallToolResult> {
  const request = buildToolCallRequest(entry.operation.urlTemplate, entry.bindings, args);
  try {
    const response = await ctx.caller.call(entry.operation, request, ctx.subject);
    return toToolResult(response, ctx.revision, entry.name);
  } catch (err) {
    ctx.logger.error(`mcp: tools/call ${entry.name}: gateway call failed`, errorFields(err));
    return toolError(
      `The gateway could not complete ${entry.operation.method.toUpperCase()} ${request.path}.`,
    );
  }
}

/** The client's `_meta.progressToken`, when it asked for progress. */
function progressToken(params: Params): string | number | undefined {
  const meta = params._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const token = (meta as Record<string, unknown>).progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

/**
 * What an upstream call relays to this client while it runs, on the call's own response stream: the upstream's
 * progress under the client's own `progressToken` (the upstream saw the service's token), and its log messages.
 */
function relay(params: Params, ctx: MethodContext): UpstreamCallRelay {
  const token = progressToken(params);
  const notify = ctx.notify;
  return {
    requestId: ctx.requestId,
    ...(notify && token !== undefined
      ? {
          onProgress: (progress: UpstreamProgress) =>
            notify('notifications/progress', { ...progress, progressToken: token }),
        }
      : {}),
    ...(notify
      ? { onLog: (message: Record<string, unknown>) => notify('notifications/message', message) }
      : {}),
  };
}

/**
 * Validates the arguments against the tool's input schema, sends the request through the gateway and returns
 * the HTTP result. Invalid arguments are a tool error from 2025-11-25 on (so the model can correct itself) and
 * JSON-RPC -32602 before that.
 */
export const toolsCall: McpMethod = {
  name: 'tools/call',
  kind: 'request',
  eras: ['session', 'stateless'],
  missingScopes(params, ctx) {
    const entry = typeof params.name === 'string' ? ctx.tools.find(params.name) : undefined;
    if (!entry && typeof params.name === 'string' && ctx.upstream?.owns(params.name)) {
      const caller = upstreamCaller(ctx);
      const missing = ctx.upstream.missingScope(params.name, caller, ctx.upstream.cachedTools(caller));
      return missing ? [missing] : [];
    }
    if (!entry || isGranted(entry, ctx.subject.scopes)) return [];
    return [entry.grantingScopes[0]!];
  },
  // An upstream tool may report progress or log while it runs; a REST-API tool only when the client asks for
  // progress (it then gets none, but the answer is the same in SSE).
  streams(params, ctx) {
    if (progressToken(params) !== undefined) return true;
    return (
      typeof params.name === 'string' && !ctx.tools.find(params.name) && !!ctx.upstream?.owns(params.name)
    );
  },
  async handle(params, ctx): Promise<CallToolResult> {
    const name = readName(params);
    const args = readArguments(params);
    const entry = ctx.tools.find(name);
    if (!entry && ctx.upstream?.owns(name))
      return ctx.upstream.call(name, args, upstreamCaller(ctx), relay(params, ctx));
    // The transport refuses ungranted calls with 403 first; this keeps the handler safe on its own.
    if (!entry || !isGranted(entry, ctx.subject.scopes)) throw unknownTool(name);
    const problems = entry.validate(args);
    if (problems.length > 0) {
      const message = `Invalid arguments for tool ${name}: ${problems.join('; ')}`;
      if (ctx.revision.inputValidationIsToolError) return toolError(message);
      throw new McpError(ErrorCode.InvalidParams, message, { errors: problems });
    }
    return call(entry, args, ctx);
  },
};
