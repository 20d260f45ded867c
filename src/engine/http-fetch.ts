import { createSecureContext } from 'node:tls';
import { context, propagation, trace } from '@opentelemetry/api';
import type { Agent, Dispatcher, ProxyAgent, fetch as undiciFetch } from 'undici';
import type { ClientCertificate, HttpFetcher, HttpProxy, HttpRequest } from '../policy/index.js';

/**
 * One agent per proxy (URL and credentials), kept for the process: connections to a proxy are reused like any
 * other. A plain-http target is sent to the proxy in absolute form; an https target goes through a CONNECT
 * tunnel, so the proxy never sees its content.
 */
const proxyAgents = new Map<string, { http: ProxyAgent; https: ProxyAgent }>();

/**
 * One agent per client certificate (and proxy) a side request presents, so that the connections made with a
 * certificate are reused for it and never for a request with another (or none). Bounded: a policy that computes
 * its certificate (`body`) could otherwise make one per request; the least recently used is closed (its requests
 * under way finish) when a new one would pass the bound.
 */
const certificateAgents = new Map<string, Dispatcher>();
const MAX_CERTIFICATE_AGENTS = 32;

interface Undici {
  readonly Agent: typeof Agent;
  readonly ProxyAgent: typeof ProxyAgent;
  readonly fetch: typeof undiciFetch;
}
let undici: Promise<Undici> | undefined;
/**
 * npm's undici, for its ProxyAgent and for agents with a client certificate, loaded once a policy sends through a
 * proxy or presents a certificate: most engines never do.
 */
const loadUndici = () =>
  (undici ??= import('undici').then(
    ({ Agent, ProxyAgent, fetch }): Undici => ({ Agent, ProxyAgent, fetch }),
  ));

function proxyOptions(proxy: HttpProxy) {
  const token =
    proxy.username === undefined
      ? undefined
      : `Basic ${Buffer.from(`${proxy.username}:${proxy.password ?? ''}`).toString('base64')}`;
  return { uri: proxy.url, ...(token ? { token } : {}) };
}

function agentFor({ ProxyAgent }: Undici, proxy: HttpProxy, target: string): ProxyAgent {
  const key = JSON.stringify([proxy.url, proxy.username ?? null, proxy.password ?? null]);
  let agents = proxyAgents.get(key);
  if (!agents) {
    const options = proxyOptions(proxy);
    agents = { http: new ProxyAgent({ ...options, proxyTunnel: false }), https: new ProxyAgent(options) };
    proxyAgents.set(key, agents);
  }
  return target.startsWith('https:') ? agents.https : agents.http;
}

/** The TLS options that present `certificate`; a blob that cannot be read fails here, before any connection. */
function tlsOptions(certificate: ClientCertificate) {
  const options =
    certificate.kind === 'pem'
      ? { cert: certificate.certificate, key: certificate.key }
      : {
          pfx: certificate.pfx,
          ...(certificate.passphrase === undefined ? {} : { passphrase: certificate.passphrase }),
        };
  try {
    createSecureContext(options);
  } catch (error) {
    // OpenSSL's message ("mac verify failure", "unsupported") names no secret.
    throw Object.assign(new Error(`${certificate.label} cannot be used: ${(error as Error).message}`), {
      code: 'CERTIFICATE_INVALID',
    });
  }
  return options;
}

/** The agent that presents `certificate` to an https target, through `proxy` when there is one. */
function certificateAgentFor(
  { Agent, ProxyAgent }: Undici,
  certificate: ClientCertificate,
  proxy: HttpProxy | undefined,
): Dispatcher {
  const key = JSON.stringify([
    certificate.poolKey,
    proxy ? [proxy.url, proxy.username ?? null, proxy.password ?? null] : null,
  ]);
  const known = certificateAgents.get(key);
  if (known) {
    certificateAgents.delete(key);
    certificateAgents.set(key, known);
    return known;
  }
  const tls = tlsOptions(certificate);
  // Through a proxy the certificate goes in the tunnelled handshake with the target, never to the proxy.
  const agent = proxy
    ? new ProxyAgent({ ...proxyOptions(proxy), requestTls: tls })
    : new Agent({ connect: tls });
  certificateAgents.set(key, agent);
  if (certificateAgents.size > MAX_CERTIFICATE_AGENTS) {
    const [oldest, evicted] = certificateAgents.entries().next().value!;
    certificateAgents.delete(oldest);
    void evicted.close().catch(() => {});
  }
  return agent;
}

/** The dispatcher for a request that presents a certificate or goes through a proxy; undefined: the runtime's. */
function dispatcherFor(loaded: Undici, request: HttpRequest): Dispatcher | undefined {
  // A certificate is presented only in a TLS handshake: a plain-http target never gets one.
  const certificate = request.url.startsWith('https:') ? request.clientCertificate : undefined;
  if (certificate) return certificateAgentFor(loaded, certificate, request.proxy);
  return request.proxy ? agentFor(loaded, request.proxy, request.url) : undefined;
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
  // Through a proxy or with a certificate, undici's own fetch takes its agent (the runtime's fetch may be another
  // undici version).
  const sent =
    request.proxy || (request.clientCertificate && request.url.startsWith('https:'))
      ? loadUndici().then((loaded) => {
          const dispatcher = dispatcherFor(loaded, request);
          return loaded.fetch(request.url, { ...init, ...(dispatcher ? { dispatcher } : {}) });
        })
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
