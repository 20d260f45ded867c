import type { InitializeResult } from '@modelcontextprotocol/client';
import { ErrorCode, McpError } from '../protocol/jsonrpc.js';
import type { McpMethod } from '../protocol/method.js';
import { latestSessionRevision, sessionRevisions } from '../protocol/revisions.js';

/**
 * Version negotiation (lifecycle, every legacy revision): echo the client's version when we speak it, else
 * offer our latest and let the client decide. The transport opens the session for the version returned here.
 */
export function negotiate(requested: string): string {
  return sessionRevisions.includes(requested) ? requested : latestSessionRevision;
}

export const initialize: McpMethod = {
  name: 'initialize',
  kind: 'request',
  eras: ['session'],
  handle(params, ctx): InitializeResult {
    if (typeof params.protocolVersion !== 'string') {
      throw new McpError(ErrorCode.InvalidParams, 'initialize: "protocolVersion" must be a string');
    }
    const result: InitializeResult = {
      protocolVersion: negotiate(params.protocolVersion),
      // Logging is offered when there are upstream servers: their log messages are relayed (logging-set-level.ts).
      capabilities: { tools: { listChanged: true }, ...(ctx.upstream ? { logging: {} } : {}) },
      serverInfo: { ...ctx.serverInfo },
    };
    if (ctx.instructions) result.instructions = ctx.instructions;
    return result;
  },
};
