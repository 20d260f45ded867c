/**
 * The policy services of one test case: the engine's own (caches, limits, counters) in-process, with what reaches
 * outside replaced by the case's stubs — HTTP calls answered from the stubs (no network), the clock fixed at the
 * case's time (a wait moves it on), counters and cached values seeded, the gateway's own tokens and credential
 * manager connections from the `tokens` and `authorizations` stubs (stubbed-identities.ts), events and log lines
 * kept. A new kind of stub is a key of `Stubs` (test-file.ts) and a service here built from it.
 */

import type { GatewayConfig } from '../config/schema.js';
import { createEngineServices, type EngineServices } from '../engine/services.js';
import { JToken, parseJson, toDotNetString } from '../expr/index.js';
import type { Logger } from '../log.js';
import type {
  HttpRequest,
  HttpResponse,
  LimitCounters,
  PolicyObserver,
  PolicyServices,
  TraceEntry,
} from '../policy/index.js';
import { MemoryLimitStore } from '../state/memory-limits.js';
import { type MissingStub, stubbedIdentities } from './stubbed-identities.js';
import type { ResponseStub, RoutedResponse, Stubs } from './test-file.js';

/** A call a policy (or the engine, retrying) made, as the stub saw it. */
export interface RecordedCall {
  readonly method: string;
  readonly url: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  /** False: no stub answered it (the policy saw a connection failure). */
  readonly answered: boolean;
}

export interface CaseServices {
  readonly services: PolicyServices;
  readonly calls: RecordedCall[];
  readonly traces: TraceEntry[];
  readonly logs: string[];
  readonly events: { loggerId: string; message: string }[];
  /** The value each counter key reached (the last count the element read). */
  readonly counters: Map<string, number>;
  /** Credentials a policy asked for that no stub gives (the case fails for each). */
  readonly missing: readonly MissingStub[];
  valueOf(key: string): Promise<unknown>;
  /** The backend's answer for the forwarded request to `url`, or undefined when no stub is for it. */
  backendAnswer(method: string, url: string): ResponseStub | undefined;
  close(): Promise<void>;
}

/** Extra answers to HTTP calls besides the file's (the JWKS of the test keys). */
export type ExtraAnswers = (request: HttpRequest) => HttpResponse | undefined;

export async function caseServices(options: {
  /** For the messages of a credential the case did not stub. */
  readonly caseName: string;
  readonly stubs: Stubs;
  /** The configuration's identities section: which source a policy's client-id selects. */
  readonly identities?: GatewayConfig['identities'];
  readonly backends: ReadonlyMap<string, string>;
  readonly observer: PolicyObserver;
  readonly extra?: ExtraAnswers;
}): Promise<CaseServices> {
  const { stubs } = options;
  let now = stubs.time === undefined ? Date.now() : Date.parse(stubs.time);
  const clock = {
    now: () => now,
    sleep: async (ms: number) => {
      now += ms;
    },
  };
  const logs: string[] = [];
  const traces: TraceEntry[] = [];
  const line = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void logs.push(`${level} ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`);
  const logger: Logger = { debug: () => {}, info: line('info'), warn: line('warn'), error: line('error') };
  const engine: EngineServices = createEngineServices({
    backends: options.backends,
    state: {},
    logger,
    trace: { write: (entry) => void traces.push(entry) },
    observer: options.observer,
  });
  const calls: RecordedCall[] = [];
  const backendRoutes: RoutedResponse[] = Array.isArray(stubs.backend) ? stubs.backend : [];
  const anyBackend = Array.isArray(stubs.backend) ? undefined : stubs.backend;
  const backendAnswer = (method: string, url: string) => find(backendRoutes, method, url) ?? anyBackend;

  const fetch = async (request: HttpRequest): Promise<HttpResponse> => {
    const extra = options.extra?.(request);
    // Policies' calls are answered from `http`; the engine's own calls to the backend (retry, redirects) from `backend`.
    const stub = extra
      ? undefined
      : (find(stubs.http, request.method, request.url) ?? find(backendRoutes, request.method, request.url));
    calls.push({
      method: request.method,
      url: request.url,
      headers: request.headers,
      body: request.body?.toString('utf8') ?? '',
      answered: extra !== undefined || (stub !== undefined && stub.fail === undefined),
    });
    if (extra) return extra;
    if (stub === undefined || stub.fail === 'connection')
      throw Object.assign(new Error(`no stub answers ${request.method} ${request.url}`), {
        code: 'ECONNREFUSED',
      });
    if (stub.fail === 'timeout') throw Object.assign(new Error('timeout'), { code: 'TIMEOUT' });
    return stubResponse(stub);
  };

  const counters = new Map<string, number>();
  const store = new MemoryLimitStore(clock.now);
  const seeded = new Set<string>();
  const seed = async (key: string, kind: 'window' | 'quota', periodSeconds: number, originMs = 0) => {
    if (seeded.has(key)) return;
    seeded.add(key);
    const count = stubs.counters[key];
    if (count === undefined || count === 0) return;
    if (kind === 'window')
      await store.slidingWindow({
        key,
        limit: Number.MAX_SAFE_INTEGER,
        periodSeconds,
        amount: count,
        mode: 'add',
      });
    else
      await store.quota({
        key,
        periodSeconds,
        originMs,
        callLimit: undefined,
        kilobyteLimit: undefined,
        calls: count,
        bytes: 0,
        mode: 'add',
      });
  };
  const limits: LimitCounters = {
    async slidingWindow(request) {
      await seed(request.key, 'window', request.periodSeconds);
      const result = await store.slidingWindow(request);
      counters.set(request.key, result.used);
      return result;
    },
    async quota(request) {
      await seed(request.key, 'quota', request.periodSeconds, request.originMs);
      const result = await store.quota(request);
      counters.set(request.key, result.calls);
      return result;
    },
    acquire: (key, max) => store.acquire(key, max, engine.concurrencyLeaseSeconds),
    release: (lease) => store.release(lease),
  };

  const credentials = stubbedIdentities({
    stubs,
    config: options.identities,
    caseName: options.caseName,
    now: clock.now,
  });
  const events: { loggerId: string; message: string }[] = [];
  const services: PolicyServices = {
    ...engine,
    fetch,
    clock,
    limits,
    identities: credentials.identities,
    authorizations: credentials.authorizations,
    eventLog: { append: async (loggerId, message) => void events.push({ loggerId, message }) },
    observer: options.observer,
  };
  for (const [key, value] of Object.entries(stubs.cache))
    await services.valueCache.set(key, runtimeValue(value), 3600);

  return {
    services,
    calls,
    traces,
    logs,
    events,
    counters,
    missing: credentials.missing,
    valueOf: async (key) => plainValue(await services.valueCache.get(key)),
    backendAnswer,
    close: () => engine.close(),
  };
}

function find(routes: readonly RoutedResponse[], method: string, url: string): RoutedResponse | undefined {
  return routes.find(
    (route) =>
      (route.method === undefined || route.method.toUpperCase() === method.toUpperCase()) &&
      (route.url.endsWith('*') ? url.startsWith(route.url.slice(0, -1)) : url === route.url),
  );
}

/** A stub's body: text as written, anything else as JSON (with its content type, unless the stub gives one). */
export function stubBody(stub: { body?: unknown; headers: Record<string, string> }): {
  body: Buffer;
  headers: [string, string][];
} {
  const headers = Object.entries(stub.headers);
  if (stub.body === undefined || stub.body === null) return { body: Buffer.alloc(0), headers };
  if (typeof stub.body === 'string') return { body: Buffer.from(stub.body), headers };
  const json = !headers.some(([name]) => name.toLowerCase() === 'content-type');
  return {
    body: Buffer.from(JSON.stringify(stub.body)),
    headers: json ? [...headers, ['content-type', 'application/json']] : headers,
  };
}

export function stubResponse(stub: ResponseStub): HttpResponse {
  const { body, headers } = stubBody(stub);
  return { status: stub.status, reason: stub.reason ?? '', headers, body };
}

/** A YAML value as policies see it: objects and arrays become JSON tokens (JObject / JArray). */
export function runtimeValue(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? parseJson(JSON.stringify(value)) : value;
}

/** A value of the policies as YAML would write it: JSON tokens as plain data, other objects as their text. */
export function plainValue(value: unknown): unknown {
  if (value instanceof JToken) return JSON.parse(toDotNetString(value));
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return toDotNetString(value);
}
