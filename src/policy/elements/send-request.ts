import { HeaderCollection, ResponseModel } from '../../expr/index.js';
import { defineElement } from '../element.js';
import { reasonPhrase } from '../message.js';
import { PolicyError } from '../runtime.js';
import { ALL_SCOPES, ALL_SECTIONS, bool, int, oneOf, str } from '../schema.js';
import { compileSideRequest, compileSideRequestIdentity, REQUEST_CHILDREN } from '../shared/side-request.js';
import { allowedMs } from '../shared/work-budget.js';

/** Calls another HTTP service and stores its response (an IResponse) in a variable. */
export const sendRequest = defineElement({
  name: 'send-request',
  summary: 'Sends a request to another service and stores the response in a variable.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: {
    mode: oneOf(['new', 'copy'], { default: 'new' }),
    'response-variable-name': str({ required: true }),
    timeout: int({ default: 60, min: 1 }),
    'ignore-error': bool({ default: false, expression: false }),
  },
  content: REQUEST_CHILDREN,
  compile(node, c) {
    const mode = node.getter('mode');
    const variable = node.getter('response-variable-name');
    const timeout = node.getter('timeout');
    const ignoreError = node.literal('ignore-error') === true;
    const build = compileSideRequest(node, c, mode, node.literal('mode'));
    const authenticate = compileSideRequestIdentity(node);
    if (node.child('set-url') === undefined && node.literal('mode') === 'new') {
      c.error(node, 'children', 'send-request in mode "new" needs a <set-url>, got none');
    }
    return async (run): Promise<'next'> => {
      const name = variable(run);
      const request = build(run);
      await authenticate?.(run, request.headers);
      try {
        const timeoutMs = allowedMs(run.services, timeout(run) * 1000);
        const response = await run.services.fetch({ ...request, timeoutMs });
        run.context.variables.set(
          name,
          new ResponseModel({
            statusCode: response.status,
            statusReason: response.reason || reasonPhrase(response.status),
            headers: new HeaderCollection(response.headers),
            body: response.body,
          }),
        );
      } catch (err) {
        if (ignoreError) {
          run.context.variables.set(name, null);
          return 'next';
        }
        const code = (err as { code?: string }).code;
        const timedOut = code === 'TIMEOUT';
        run.services.logger.warn('send-request failed', { url: request.url, error: (err as Error).message });
        // A PKCS #12 blob (authentication-certificate/@body) that cannot be read: the policy's error, not the host's.
        if (code === 'CERTIFICATE_INVALID') {
          throw new PolicyError('CertificateInvalid', (err as Error).message, 500, 'Internal server error');
        }
        throw new PolicyError(
          timedOut ? 'Timeout' : 'BackendConnectionFailure',
          timedOut
            ? `Request to ${new URL(request.url).host} timed out.`
            : `Request to ${new URL(request.url).host} failed.`,
          500,
          'Internal server error',
        );
      }
      return 'next';
    };
  },
});
