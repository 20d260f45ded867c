import { randomUUID } from 'node:crypto';
import type { Exchange, ExchangeFactory } from './exchange.js';
import { firstHeader } from './headers.js';

/**
 * The exchange for a gateway with no policies: forwards the request untouched except for a request id (kept when the
 * client sent one), and asks Envoy for nothing else, so the response never crosses the stream.
 */
export const passThroughExchanges: ExchangeFactory = (): Exchange => ({
  requestHeaders(head) {
    const requestId = firstHeader(head.headers, 'x-request-id');
    return {
      action: 'continue',
      headers: requestId ? [] : [{ name: 'x-request-id', value: randomUUID() }],
      next: { requestBody: false, responseHeaders: false, responseBody: false },
    };
  },
});
