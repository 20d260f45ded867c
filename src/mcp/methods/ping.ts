import type { McpMethod } from '../protocol/method.js';

/** Liveness check: an empty result, promptly (basic/utilities/ping). Gone in the stateless revision. */
export const ping: McpMethod = {
  name: 'ping',
  kind: 'request',
  eras: ['session'],
  handle() {
    return {};
  },
};
