import type { McpMethod } from '../protocol/method.js';

/** The client finished initialization; over HTTP the transport answers 202 with no body. */
export const notificationsInitialized: McpMethod = {
  name: 'notifications/initialized',
  kind: 'notification',
  eras: ['session'],
  handle(_params, ctx) {
    if (ctx.session) ctx.session.initialized = true;
  },
};
