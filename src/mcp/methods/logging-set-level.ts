import { ErrorCode, McpError } from '../protocol/jsonrpc.js';
import type { McpMethod } from '../protocol/method.js';
import { upstreamCaller } from '../upstream/caller.js';

/**
 * The client's log level. The endpoint logs nothing of its own to clients; the log messages it relays come from the
 * upstream MCP servers (APIs of type `mcp`), so the level is passed to this session's upstream sessions (those open
 * now and those opened later) and each server filters its own messages. Without upstream servers the endpoint offers
 * no logging and the method does not exist.
 */
export const loggingSetLevel: McpMethod = {
  name: 'logging/setLevel',
  kind: 'request',
  eras: ['session'],
  async handle(params, ctx) {
    if (!ctx.upstream) throw new McpError(ErrorCode.MethodNotFound, 'Method not found: logging/setLevel');
    // The SDK's schemas load with the first upstream connection (see upstream/connection.ts), not at start.
    const { LoggingLevelSchema } = await import('@modelcontextprotocol/core');
    const level = LoggingLevelSchema.safeParse(params.level);
    if (!level.success)
      throw new McpError(
        ErrorCode.InvalidParams,
        `logging/setLevel: "level" must be one of ${LoggingLevelSchema.options.join(', ')}`,
      );
    await ctx.upstream.setLogLevel(upstreamCaller(ctx), level.data);
    return {};
  },
};
