import { defineElement } from '../element.js';
import { ALL_SCOPES, ALL_SECTIONS, int, oneOf } from '../schema.js';
import { compileSideRequest, compileSideRequestIdentity, REQUEST_CHILDREN } from '../shared/side-request.js';

/** Fires a request to another service without waiting for (or keeping) the answer. */
export const sendOneWayRequest = defineElement({
  name: 'send-one-way-request',
  summary: 'Sends a request to another service without waiting for the response.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: { mode: oneOf(['new', 'copy'], { default: 'new' }), timeout: int({ default: 60, min: 1 }) },
  content: REQUEST_CHILDREN,
  compile(node, c) {
    const mode = node.getter('mode');
    const timeout = node.getter('timeout');
    const build = compileSideRequest(node, c, mode, node.literal('mode'));
    const authenticate = compileSideRequestIdentity(node);
    return (run) => {
      const request = build(run);
      // Fire and forget, the token too: a request that cannot be authenticated is logged like one that fails.
      const sent = authenticate
        ? authenticate(run, request.headers).then(() =>
            run.services.fetch({ ...request, timeoutMs: timeout(run) * 1000 }),
          )
        : run.services.fetch({ ...request, timeoutMs: timeout(run) * 1000 });
      sent.catch((err: unknown) => {
        run.services.logger.warn('send-one-way-request failed', {
          url: request.url,
          error: (err as Error).message,
        });
      });
      return 'next';
    };
  },
});
