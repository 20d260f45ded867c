import { context, propagation, trace } from '@opentelemetry/api';
import type { HttpFetcher } from '../policy/index.js';

/** The fetch send-request and the other outbound calls of policies use: bounded in time, no redirects followed. */
export const fetchWithTimeout: HttpFetcher = async (request) => {
  const headers = request.headers.map(([name, value]) => [name, value] as [string, string]);
  // Inside a traced request (telemetry.otlp), the called service joins its trace, unless the policy set its own.
  if (trace.getSpan(context.active()) && !headers.some(([name]) => name.toLowerCase() === 'traceparent'))
    propagation.inject(context.active(), headers, {
      set: (carrier, key, value) => carrier.push([key, value]),
    });
  const response = await fetch(request.url, {
    method: request.method,
    headers,
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
