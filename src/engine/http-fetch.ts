import { context, propagation, trace } from '@opentelemetry/api';
import type { ProxyAgent, fetch as undiciFetch } from 'undici';
import type { HttpFetcher, HttpProxy } from '../policy/index.js';

/**
 * One agent per proxy (URL and credentials), kept for the process: connections to a proxy are reused like any
 * other. A plain-http target is sent to the proxy in absolute form; an https target goes through a CONNECT
 * tunnel, so the proxy never sees its content.
 */
const proxyAgents = new Map<string, { http: ProxyAgent; https: ProxyAgent }>();

interface Undici {
  readonly ProxyAgent: typeof ProxyAgent;
  readonly fetch: typeof undiciFetch;
}
let undici: Promise<Undici> | undefined;
/** npm's undici, for its ProxyAgent, loaded once a policy sends through a proxy: most engines never do. */
const loadUndici = () =>
  (undici ??= import('undici').then(({ ProxyAgent, fetch }): Undici => ({ ProxyAgent, fetch })));

function agentFor({ ProxyAgent }: Undici, proxy: HttpProxy, target: string): ProxyAgent {
  const key = JSON.stringify([proxy.url, proxy.username ?? null, proxy.password ?? null]);
  let agents = proxyAgents.get(key);
  if (!agents) {
    const token =
      proxy.username === undefined
        ? undefined
        : `Basic ${Buffer.from(`${proxy.username}:${proxy.password ?? ''}`).toString('base64')}`;
    const options = { uri: proxy.url, ...(token ? { token } : {}) };
    agents = { http: new ProxyAgent({ ...options, proxyTunnel: false }), https: new ProxyAgent(options) };
    proxyAgents.set(key, agents);
  }
  return target.startsWith('https:') ? agents.https : agents.http;
}

/** The fetch send-request and the other outbound calls of policies use: bounded in time, no redirects followed. */
export const fetchWithTimeout: HttpFetcher = async (request) => {
  const headers = request.headers.map(([name, value]) => [name, value] as [string, string]);
  // Inside a traced request (telemetry.otlp), the called service joins its trace, unless the policy set its own.
  if (trace.getSpan(context.active()) && !headers.some(([name]) => name.toLowerCase() === 'traceparent'))
    propagation.inject(context.active(), headers, {
      set: (carrier, key, value) => carrier.push([key, value]),
    });
  const init = {
    method: request.method,
    headers,
    ...(request.body ? { body: request.body } : {}),
    signal: AbortSignal.timeout(request.timeoutMs),
    redirect: 'manual' as const,
  };
  // Through a proxy, undici's own fetch takes its ProxyAgent (the runtime's fetch may be another undici version).
  const proxy = request.proxy;
  const sent = proxy
    ? loadUndici().then((loaded) =>
        loaded.fetch(request.url, { ...init, dispatcher: agentFor(loaded, proxy, request.url) }),
      )
    : fetch(request.url, init);
  const response = await sent.catch((error: unknown) => {
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
