import type { HttpFetcher } from '../policy/index.js';

/** The fetch send-request and the other outbound calls of policies use: bounded in time, no redirects followed. */
export const fetchWithTimeout: HttpFetcher = async (request) => {
  const response = await fetch(request.url, {
    method: request.method,
    headers: request.headers.map(([name, value]) => [name, value] as [string, string]),
    ...(request.body ? { body: request.body } : {}),
    signal: AbortSignal.timeout(request.timeoutMs),
    redirect: 'manual',
  }).catch((error: unknown) => {
    if (error instanceof DOMException && error.name === 'TimeoutError')
      throw Object.assign(new Error('timeout'), { code: 'TIMEOUT' });
    throw error;
  });
  return {
    status: response.status,
    reason: response.statusText,
    headers: [...response.headers.entries()],
    body: Buffer.from(await response.arrayBuffer()),
  };
};
