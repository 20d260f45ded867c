import type { McpMethod } from '../protocol/method.js';
import { upstreamCaller } from '../upstream/caller.js';

/**
 * A client gave up on a request. A REST-API tool call is one HTTP request through the gateway that finishes on its
 * own; its response simply goes unread (the spec allows ignoring the notification). An upstream MCP server's tool
 * call is cancelled there too, on whichever service process runs it: the upstream client sends the server its own
 * `notifications/cancelled`.
 */
export const notificationsCancelled: McpMethod = {
  name: 'notifications/cancelled',
  kind: 'notification',
  eras: ['session', 'stateless'],
  async handle(params, ctx) {
    const { requestId } = params;
    if (ctx.upstream && (typeof requestId === 'string' || typeof requestId === 'number'))
      await ctx.upstream.cancel(upstreamCaller(ctx), requestId);
  },
};
