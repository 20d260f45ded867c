/** How the response caches (cache-lookup/-store, llm-semantic-cache-lookup/-store) keep and serve a response. */
import { HeaderCollection, ResponseModel } from '../../expr/index.js';
import type { CachedResponse } from '../services.js';

/** Response headers that describe one connection or one exchange, never stored. */
const NOT_STORED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'set-cookie', 'date', 'age']);

export function storedResponse(response: ResponseModel): CachedResponse {
  const headers: [string, string][] = [];
  for (const [name, values] of response.headers.entries()) {
    if (NOT_STORED.has(name.toLowerCase())) continue;
    for (const v of values) headers.push([name, v]);
  }
  return {
    status: response.statusCode,
    reason: response.statusReason,
    headers,
    body: Buffer.from(response.body?.bytes ?? Buffer.alloc(0)),
  };
}

export function servedResponse(hit: CachedResponse): ResponseModel {
  return new ResponseModel({
    statusCode: hit.status,
    statusReason: hit.reason,
    headers: new HeaderCollection(hit.headers),
    body: Buffer.from(hit.body),
  });
}
