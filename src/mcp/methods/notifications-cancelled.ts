import type { McpMethod } from '../protocol/method.js';

/**
 * A client gave up on a request. Tool calls are single HTTP requests through the gateway that finish on their
 * own; the response simply goes unread, so there is nothing to stop here (the spec allows ignoring it).
 */
export const notificationsCancelled: McpMethod = {
  name: 'notifications/cancelled',
  kind: 'notification',
  eras: ['session', 'stateless'],
  handle() {},
};
