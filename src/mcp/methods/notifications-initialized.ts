import type { McpMethod } from '../protocol/method.js';

/** The client finished initialization; over HTTP the transport answers 202 with no body. */
export const notificationsInitialized: McpMethod = {
  name: 'notifications/initialized',
  kind: 'notification',
  eras: ['session'],
  async handle(_params, ctx) {
    await ctx.session?.markInitialized();
  },
};
