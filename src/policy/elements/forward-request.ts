import { defineElement } from '../element.js';
import { ALL_SCOPES, bool, EMPTY, int, oneOf } from '../schema.js';

/**
 * Marks that the backend is called and how. The transport (Envoy) makes the call; this only records the
 * settings on the run. Without a forward-request in the backend section the backend is not called at all.
 */
export const forwardRequest = defineElement({
  name: 'forward-request',
  summary: 'Forwards the request to the backend (timeouts, redirects, buffering).',
  sections: ['backend'],
  scopes: ALL_SCOPES,
  attributes: {
    timeout: int({ min: 0 }),
    'timeout-ms': int({ min: 0 }),
    'continue-timeout': int({ min: 0 }),
    'http-version': oneOf(['1', '2or1', '2'], { default: '1' }),
    'follow-redirects': bool({ default: false }),
    'buffer-request-body': bool({ default: false, expression: false }),
    'buffer-response': bool({ default: true, expression: false }),
    'fail-on-error-status-code': bool({ default: false, expression: false }),
  },
  content: EMPTY,
  compile(node, c) {
    if (node.has('timeout') && node.has('timeout-ms')) {
      c.error(node, 'attribute', 'forward-request takes timeout or timeout-ms, got both');
    }
    const seconds = node.getter('timeout');
    const ms = node.getter('timeout-ms');
    const continueTimeout = node.getter('continue-timeout');
    const httpVersion = node.getter('http-version');
    const followRedirects = node.getter('follow-redirects');
    const bufferRequestBody = node.literal('buffer-request-body') === true;
    const bufferResponse = node.literal('buffer-response') === true;
    const failOnErrorStatusCode = node.literal('fail-on-error-status-code') === true;
    return (run) => {
      const version = httpVersion(run);
      run.forward = {
        timeoutMs: ms !== undefined ? ms(run) : (seconds?.(run) ?? 300) * 1000,
        continueTimeoutMs: continueTimeout === undefined ? undefined : continueTimeout(run) * 1000,
        httpVersion: version === '2' || version === '2or1' ? version : '1',
        followRedirects: followRedirects(run),
        bufferRequestBody,
        bufferResponse,
        failOnErrorStatusCode,
      };
      return 'next';
    };
  },
});
