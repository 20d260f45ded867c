import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureProcessLog } from '../../doubles/logger.js';
import { type ScriptedBackend, startScriptedBackend } from '../../doubles/scripted-backend.js';
import { type CertificateWorkshop, certificateWorkshop } from '../../processes/certificates.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';
import { until } from '../../processes/wait.js';

/**
 * API Management's backend entities through the real Envoy and engine, with real backends on loopback
 * (https://learn.microsoft.com/azure/api-management/backends): a load-balanced pool by priority and weight, circuit
 * breakers tripping on 429 with Retry-After and on 5xx, `retry` picking a backend again, credentials, TLS checks.
 */
describe('backend entities through Envoy', () => {
  const throttleAfter = 3;
  const secretKey = 's3cret-primary-key-9f1c';
  let primary: ScriptedBackend;
  let secondA: ScriptedBackend;
  let secondB: ScriptedBackend;
  let failing: ScriptedBackend;
  let primaryCalls = 0;
  let gateway: GatewayStack;
  let workshop: CertificateWorkshop;
  let tlsBackend: ReturnType<typeof createHttpsServer>;
  let tlsPort = 0;
  let log: ReturnType<typeof captureProcessLog>;

  // Each backend answers with its name and what it received; `primary` answers 429 (Retry-After: 1) once, after
  // `throttleAfter` calls, as an Azure OpenAI deployment out of quota does.
  const named = (name: string) =>
    startScriptedBackend((request, response) => {
      if (name === 'primary' && ++primaryCalls === throttleAfter + 1) {
        response.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' });
        response.end('{"error":"throttled"}');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ backend: name, url: request.url, headers: request.headers }));
    });

  beforeAll(async () => {
    primary = await named('primary');
    secondA = await named('second-a');
    secondB = await named('second-b');
    failing = await startScriptedBackend((_, response) => {
      response.writeHead(500);
      response.end('down');
    });
    workshop = await certificateWorkshop();
    const self = await workshop.selfSigned({
      name: 'backend',
      subject: '/CN=localhost',
      dns: ['localhost'],
      ips: ['127.0.0.1'],
      usage: 'server',
    });
    tlsBackend = createHttpsServer({ cert: self.pem, key: self.key }, (_, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"backend":"tls"}');
    });
    await new Promise<void>((resolve) => tlsBackend.listen(0, '127.0.0.1', resolve));
    tlsPort = (tlsBackend.address() as AddressInfo).port;
    const breaker = (min: number, max: number, trip: string) =>
      `{ rules: [{ name: r, failureCondition: { count: 1, interval: PT1M, statusCodeRanges: [{ min: ${min}, max: ${max} }] }, tripDuration: ${trip}, acceptRetryAfter: true }] }`;
    log = captureProcessLog();
    gateway = await startGateway(
      `namedValues:
  primary-key: { value: ${secretKey}, secret: true }
backends:
  - id: primary
    url: ${primary.url}/openai
    credentials:
      header: { api-key: ["{{primary-key}}"] }
      query: { deployment: [gpt] }
    circuitBreaker: ${breaker(429, 429, 'PT1M')}
  - { id: second-a, url: "${secondA.url}/openai", circuitBreaker: ${breaker(500, 599, 'PT1M')} }
  - { id: second-b, url: "${secondB.url}/openai", circuitBreaker: ${breaker(500, 599, 'PT1M')} }
  - { id: failing, url: "${failing.url}", circuitBreaker: ${breaker(500, 599, 'PT1M')} }
  - id: ai-pool
    type: pool
    pool:
      services:
        - { id: primary, priority: 1 }
        - { id: second-a, priority: 2 }
        - { id: second-b, priority: 2 }
  - id: weighted
    type: pool
    pool: { services: [{ id: second-a, weight: 3 }, { id: second-b, weight: 1 }] }
  - { id: doomed, type: pool, pool: { services: [{ id: failing }] } }
  - { id: tls-checked, url: "https://127.0.0.1:${tlsPort}" }
  - { id: tls-unchecked, url: "https://127.0.0.1:${tlsPort}", tls: { validateCertificateChain: false } }
  - { id: tls-trusted, url: "https://127.0.0.1:${tlsPort}", tls: { trustedCa: "${self.certificateFile}" } }
apis:
${apiYaml('ai', `${primary.url}/unused`, [
  ['chat', 'POST', '/chat', 'ai.xml'],
  ['weighted', 'GET', '/weighted', 'weighted.xml'],
  ['doomed', 'GET', '/doomed', 'doomed.xml'],
  ['tls', 'GET', '/tls/{which}', 'tls.xml'],
])}
`,
      {
        // The AI gateway samples' pattern: the pool, and a retry on 429 that picks a backend again.
        'ai.xml': policy({
          inbound: '<set-backend-service backend-id="ai-pool" />',
          backend:
            '<retry condition="@(context.Response.StatusCode == 429)" count="2" interval="0"><forward-request buffer-request-body="true" /></retry>',
          outbound:
            '<set-header name="x-backend-url" exists-action="override"><value>@(context.Request.Url.ToString())</value></set-header>',
        }),
        'weighted.xml': policy({ inbound: '<set-backend-service backend-id="weighted" />' }),
        'doomed.xml': policy({
          inbound: '<set-backend-service backend-id="doomed" />',
          onError:
            '<set-header name="x-last-error" exists-action="override"><value>@(context.LastError.Source + "/" + context.LastError.Reason)</value></set-header>',
        }),
        'tls.xml': policy({
          inbound:
            '<set-backend-service backend-id="@("tls-" + context.Request.MatchedParameters["which"])" />',
        }),
      },
      { accessLog: true },
    );
  });

  afterAll(async () => {
    log?.stop();
    await gateway?.stop();
    for (const backend of [primary, secondA, secondB, failing]) await backend?.close();
    await new Promise<void>((resolve) => (tlsBackend ? tlsBackend.close(() => resolve()) : resolve()));
    await workshop?.remove();
  });

  const chat = async () => {
    const response = await fetch(`${gateway.url}/ai/chat?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': 'the-client-s-own' },
      body: '{"messages":[]}',
    });
    const body = (await response.json()) as { backend: string; url: string; headers: Record<string, string> };
    return { status: response.status, body, backendUrl: response.headers.get('x-backend-url') };
  };

  it('priority 1 takes every request, with its credentials, until it answers 429; then priority 2, no request lost', async () => {
    const first = [];
    for (let i = 0; i < throttleAfter; i++) first.push(await chat());
    expect(first.map((answer) => [answer.status, answer.body.backend])).toEqual(
      Array.from({ length: throttleAfter }, () => [200, 'primary']),
    );
    // The backend's credentials replace the client's header and join its query; context.Request.Url shows them not.
    expect(first[0]!.body.headers['api-key']).toBe(secretKey);
    expect(first[0]!.body.url).toBe('/openai/chat?x=1&deployment=gpt');
    expect(first[0]!.backendUrl).toBe(`${primary.url}/openai/chat?x=1`);

    // The 429 trips the primary (for its Retry-After, 1 s); the retry goes to the pool's choice now: priority 2.
    const failover = await chat();
    expect(failover.status).toBe(200);
    expect(['second-a', 'second-b']).toContain(failover.body.backend);
    // context.Request.Url follows the retry to the backend that answered.
    const answering = failover.body.backend === 'second-a' ? secondA : secondB;
    expect(failover.backendUrl).toBe(`${answering.url}/openai/chat?x=1`);
    expect(failover.body.headers['api-key']).toBe('the-client-s-own');

    const during = [];
    for (let i = 0; i < 4; i++) during.push((await chat()).body.backend);
    expect(during.filter((name) => name === 'primary')).toEqual([]);
    expect(new Set(during)).toEqual(new Set(['second-a', 'second-b']));

    // After the Retry-After the primary takes requests again.
    await until(
      async () => (await chat()).body.backend === 'primary',
      'the primary back after its trip',
      10_000,
    );
    expect((await chat()).body.backend).toBe('primary');
  });

  it('spreads by weight within a priority group', async () => {
    const counts: Record<string, number> = {};
    for (let i = 0; i < 40; i++) {
      const body = (await (await fetch(`${gateway.url}/ai/weighted`)).json()) as { backend: string };
      counts[body.backend] = (counts[body.backend] ?? 0) + 1;
    }
    // One engine's smooth round-robin is exact; API Management's own is approximate.
    expect(counts['second-a']).toBeGreaterThanOrEqual(29);
    expect(counts['second-a']).toBeLessThanOrEqual(31);
    expect(counts['second-a']! + counts['second-b']!).toBe(40);
  });

  it('a pool whose every backend is tripped answers 503, as API Management does, with LastError', async () => {
    const tripping = await fetch(`${gateway.url}/ai/doomed`);
    expect(tripping.status).toBe(500);
    const calls = failing.hits.get('/doomed');
    const refused = await fetch(`${gateway.url}/ai/doomed`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('x-last-error')).toBe('set-backend-service/BackendUnavailable');
    expect(failing.hits.get('/doomed')).toBe(calls);
  });

  it('checks a backend certificate as the entity says: on by default, off, or against its own CA', async () => {
    const checked = await fetch(`${gateway.url}/ai/tls/checked`);
    expect(checked.status).toBeGreaterThanOrEqual(500);
    expect((await fetch(`${gateway.url}/ai/tls/unchecked`)).status).toBe(200);
    expect((await fetch(`${gateway.url}/ai/tls/trusted`)).status).toBe(200);
  });

  it('never logs a credential', () => {
    expect(log.lines().some((line) => line.msg === 'request' || line.message === 'request')).toBe(true);
    expect(log.text()).not.toContain(secretKey);
  });
});

/**
 * API Management's session awareness (https://learn.microsoft.com/azure/api-management/backends#session-awareness)
 * through the real Envoy and engine: the gateway sets a session cookie, a client that sends it back stays on one
 * backend of the pool, and a tripped backend moves the session (the answer's cookie names the new one).
 */
describe('a pool with session affinity through Envoy', () => {
  const cookie = 'APIM-Backend-Affinity';
  const names = ['sticky-a', 'sticky-b', 'sticky-c'];
  let backends: ScriptedBackend[] = [];
  let gateway: GatewayStack;

  beforeAll(async () => {
    // Each answers with its name; asked with x-throttle, it answers 429 with Retry-After, which trips its breaker.
    backends = await Promise.all(
      names.map((name) =>
        startScriptedBackend((request, response) => {
          if (request.headers['x-throttle'] === name) {
            response.writeHead(429, { 'retry-after': '60', 'set-cookie': 'backend-own=1; Path=/' });
            response.end('throttled');
            return;
          }
          response.writeHead(200, {
            'content-type': 'application/json',
            'set-cookie': 'backend-own=1; Path=/',
          });
          response.end(JSON.stringify({ backend: name }));
        }),
      ),
    );
    const breaker =
      '{ rules: [{ failureCondition: { count: 1, interval: PT1M, statusCodeRanges: [{ min: 429, max: 429 }] }, tripDuration: PT1M, acceptRetryAfter: true }] }';
    gateway = await startGateway(
      `backends:
${names.map((name, index) => `  - { id: ${name}, url: "${backends[index]!.url}", circuitBreaker: ${breaker} }`).join('\n')}
  - id: sticky
    type: pool
    pool:
      services: [${names.map((name) => `{ id: ${name} }`).join(', ')}]
      sessionAffinity: { sessionId: { source: Cookie, name: ${cookie} } }
apis:
${apiYaml('sessions', `${backends[0]!.url}/unused`, [
  ['chat', 'GET', '/chat', 'sticky.xml'],
  ['retried', 'GET', '/retried', 'retried.xml'],
])}
`,
      {
        'sticky.xml': policy({ inbound: '<set-backend-service backend-id="sticky" />' }),
        'retried.xml': policy({
          inbound: '<set-backend-service backend-id="sticky" />',
          backend:
            '<retry condition="@(context.Response.StatusCode == 429)" count="2" interval="0"><forward-request /></retry>',
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    for (const backend of backends) await backend?.close();
  });

  const chat = async (headers: Record<string, string> = {}, operation = 'chat') => {
    const response = await fetch(`${gateway.url}/sessions/${operation}`, { headers });
    const text = await response.text();
    const ours = response.headers.getSetCookie().find((value) => value.startsWith(`${cookie}=`));
    return {
      status: response.status,
      backend: response.status === 200 ? (JSON.parse(text) as { backend: string }).backend : undefined,
      setCookies: response.headers.getSetCookie(),
      sessionCookie: ours?.split(';')[0],
    };
  };

  it('sets a session cookie, keeps a client that sends it back on one backend, and moves it when that one trips', async () => {
    const first = await chat();
    expect(first.status).toBe(200);
    // The gateway's cookie joins the backend's own.
    expect(first.setCookies).toContain('backend-own=1; Path=/');
    expect(first.sessionCookie).toMatch(new RegExp(`^${cookie}=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
    const session = first.sessionCookie!;

    const sticking = [];
    for (let i = 0; i < 6; i++) sticking.push(await chat({ cookie: `other=1; ${session}` }));
    expect(sticking.map((answer) => answer.backend)).toEqual(Array(6).fill(first.backend));
    // The cookie already names the backend: it is not set again.
    expect(sticking.every((answer) => answer.sessionCookie === undefined)).toBe(true);

    // Clients without the cookie are spread over the pool as before.
    const spread = new Set<string | undefined>();
    for (let i = 0; i < 6; i++) spread.add((await chat()).backend);
    expect(spread).toEqual(new Set(names));

    // The session's backend answers 429: the answer goes to the client as given, and trips its breaker.
    const tripping = await chat({ cookie: session, 'x-throttle': first.backend! });
    expect(tripping.status).toBe(429);
    // The next request of the session goes to another backend, and the answer's cookie names it (same session id).
    const moved = await chat({ cookie: session });
    expect(moved.status).toBe(200);
    expect(moved.backend).not.toBe(first.backend);
    expect(moved.sessionCookie).toBeDefined();
    expect(moved.sessionCookie).not.toBe(session);
    expect(moved.sessionCookie!.split('.')[0]).toBe(session.split('.')[0]);
    const after = [];
    for (let i = 0; i < 4; i++) after.push((await chat({ cookie: moved.sessionCookie! })).backend);
    expect(after).toEqual(Array(4).fill(moved.backend));
  });

  it('a retry after the session’s backend tripped goes to the backend the pool chooses, and the answer moves the session there', async () => {
    const first = await chat({}, 'retried');
    expect(first.status).toBe(200);
    const session = first.sessionCookie!;
    const retried = await chat({ cookie: session, 'x-throttle': first.backend! }, 'retried');
    // No request lost: the 429 tripped the session's backend, the retry was answered by another.
    expect(retried.status).toBe(200);
    expect(retried.backend).not.toBe(first.backend);
    expect(retried.sessionCookie!.split('.')[0]).toBe(session.split('.')[0]);
    expect((await chat({ cookie: retried.sessionCookie! }, 'retried')).backend).toBe(retried.backend);
  });
});
