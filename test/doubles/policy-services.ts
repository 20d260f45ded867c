/** Fake services and helpers for policy unit tests: in-memory, deterministic, inspectable. */
import { compilePolicyDocument, readPolicyDocument } from '../../src/policy/document.js';
import { buildPipeline, type Pipeline, type ScopeDocuments } from '../../src/policy/pipeline.js';
import { type FinalResponse, PipelineRun, type RequestDescription } from '../../src/policy/runner.js';
import type { Scope } from '../../src/policy/schema.js';
import type {
  BackendInfo,
  CachedResponse,
  CounterOutcome,
  HttpRequest,
  HttpResponse,
  MetricSink,
  PolicyServices,
  TraceEntry,
} from '../../src/policy/services.js';
import type { NamedValue } from '../../src/policy/source.js';
import { MemoryLimitStore } from '../../src/state/memory-limits.js';
import { MemoryVectorStore } from '../../src/state/vector-store.js';
import { type LoggedLine, recordingLogger } from './logger.js';

export interface FakeServices extends PolicyServices {
  readonly traces: TraceEntry[];
  readonly logs: LoggedLine[];
  readonly counts: { element: string; outcome: CounterOutcome; reason?: string }[];
  readonly fetched: HttpRequest[];
  readonly sleeps: number[];
  readonly responses: Map<string, { value: CachedResponse; ttl: number }>;
  readonly values: Map<string, { value: unknown; ttl: number }>;
  /** What the semantic cache stored, oldest first (the entries themselves live in an in-process vector store). */
  readonly semanticStores: {
    partition: string;
    embedding: readonly number[];
    value: CachedResponse;
    ttl: number;
  }[];
  readonly events: { loggerId: string; message: string; partition: { id?: string; key?: string } }[];
  readonly metrics: MetricSink & { readonly emitted: Parameters<MetricSink['emit']>[0][] };
  now: number;
  route(url: string, response: Omit<Partial<HttpResponse>, 'body'> & { body?: Buffer | string }): void;
}

export function fakeServices(backends: Record<string, string> = {}): FakeServices {
  const routes = new Map<string, HttpResponse>();
  const limitStore = new MemoryLimitStore(() => services.now);
  // The real in-process vector store on the fake clock; values are kept by index into semanticStores.
  const vectorStore = new MemoryVectorStore({ maxBytes: 1 << 20 }, () => services.now);
  const logged = recordingLogger();
  const services: FakeServices = {
    traces: [],
    logs: logged.lines,
    counts: [],
    fetched: [],
    sleeps: [],
    responses: new Map(),
    values: new Map(),
    semanticStores: [],
    events: [],
    now: Date.UTC(2025, 0, 1),
    route(url, response) {
      routes.set(url, {
        status: response.status ?? 200,
        reason: response.reason ?? 'OK',
        headers: response.headers ?? [],
        body:
          typeof response.body === 'string' ? Buffer.from(response.body) : (response.body ?? Buffer.alloc(0)),
      });
    },
    responseCache: {
      async get(key) {
        return services.responses.get(key)?.value;
      },
      async set(key, value, ttl) {
        services.responses.set(key, { value, ttl });
      },
    },
    valueCache: {
      async get(key) {
        return services.values.get(key)?.value;
      },
      async set(key, value, ttl) {
        services.values.set(key, { value, ttl });
      },
      async delete(key) {
        services.values.delete(key);
      },
    },
    semanticCache: {
      async lookup(partition, embedding, maxDistance) {
        const match = await vectorStore.nearest(partition, Float32Array.from(embedding), maxDistance);
        if (match === undefined) return undefined;
        return {
          response: services.semanticStores[match.value.readUInt32LE(0)]!.value,
          distance: match.distance,
        };
      },
      async store(partition, embedding, value, ttl) {
        const index = Buffer.alloc(4);
        index.writeUInt32LE(services.semanticStores.length);
        services.semanticStores.push({ partition, embedding, value, ttl });
        await vectorStore.add(partition, Float32Array.from(embedding), index, ttl);
      },
    },
    metrics: {
      emitted: [],
      emit(metric) {
        services.metrics.emitted.push(metric);
      },
    },
    eventLog: {
      async append(loggerId, message, partition) {
        if (loggerId === 'broken') throw new Error('event hub unreachable');
        services.events.push({ loggerId, message, partition: { ...partition } });
      },
    },
    // The real in-process counters on the fake clock (the same semantics the Redis scripts have).
    limits: {
      slidingWindow: (request) => limitStore.slidingWindow(request),
      quota: (request) => limitStore.quota(request),
      acquire: (key, max) => limitStore.acquire(key, max, 300),
      release: (lease) => limitStore.release(lease),
    },
    backends: {
      get(id): BackendInfo | undefined {
        const url = backends[id];
        return url === undefined ? undefined : { id, url };
      },
    },
    async fetch(request) {
      services.fetched.push(request);
      const r = routes.get(request.url);
      if (r === undefined)
        throw Object.assign(new Error(`connect ECONNREFUSED ${request.url}`), { code: 'ECONNREFUSED' });
      return r;
    },
    clock: {
      now: () => services.now,
      async sleep(ms) {
        services.sleeps.push(ms);
      },
    },
    logger: logged.logger,
    trace: { write: (entry) => services.traces.push(entry) },
    counters: {
      count: (element, outcome, reason) =>
        services.counts.push({ element, outcome, ...(reason === undefined ? {} : { reason }) }),
    },
  };
  return services;
}

export function compileAt(
  xml: string,
  scope: Scope = 'operation',
  namedValues: Record<string, string | NamedValue> = {},
) {
  const nv = new Map(
    Object.entries(namedValues).map(([k, v]) => [k, typeof v === 'string' ? { value: v } : v] as const),
  );
  return compilePolicyDocument(readPolicyDocument(xml, { file: `${scope}.xml`, namedValues: nv }), { scope });
}

/** A pipeline from an operation-scope document over the default global policy (forward-request). */
export function pipelineOf(xml: string, more: Omit<ScopeDocuments, 'operation'> = {}): Pipeline {
  return buildPipeline({ ...more, operation: compileAt(xml) });
}

/** Wraps statements in `<policies>`: `sections({ inbound: '…' })`; absent sections inherit with <base/>. */
export function policies(
  sections: Partial<Record<'inbound' | 'backend' | 'outbound' | 'on-error', string>>,
): string {
  const body = (['inbound', 'backend', 'outbound', 'on-error'] as const)
    .map((s) => `<${s}>${sections[s] ?? '<base />'}</${s}>`)
    .join('\n');
  return `<policies>\n${body}\n</policies>`;
}

export function request(init: Partial<RequestDescription> = {}): RequestDescription {
  return {
    method: 'GET',
    url: 'https://gw.example.com/api/Course',
    headers: [],
    clientIp: '203.0.113.7',
    ...init,
  };
}

/** Runs inbound+backend; when forwarded, answers with `backend` and runs outbound. */
export async function runAll(
  pipeline: Pipeline,
  req: RequestDescription,
  services: PolicyServices,
  backend: { status?: number; headers?: [string, string][]; body?: string } = {},
): Promise<{ run: PipelineRun; forwarded: boolean; response: FinalResponse }> {
  const run = new PipelineRun(pipeline, req, services);
  const outcome = await run.onRequest();
  if (outcome.kind === 'respond') return { run, forwarded: false, response: outcome.response };
  const response = await run.onResponse({
    status: backend.status ?? 200,
    headers: backend.headers ?? [],
    body: Buffer.from(backend.body ?? ''),
  });
  return { run, forwarded: true, response };
}

export function header(response: FinalResponse, name: string): string[] {
  return response.headers.filter(([n]) => n.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
}

/** Runs `statements` as the operation's inbound section; returns the run and what the transport is told. */
export async function inbound(
  statements: string,
  req: Partial<RequestDescription> = {},
  services = fakeServices(),
) {
  const run = new PipelineRun(pipelineOf(policies({ inbound: statements })), request(req), services);
  const outcome = await run.onRequest();
  return { run, outcome, services, context: run.context };
}

/** Runs `statements` as the operation's outbound section on a backend answer. */
export async function outbound(
  statements: string,
  backend: { status?: number; headers?: [string, string][]; body?: string } = {},
  req: Partial<RequestDescription> = {},
  services = fakeServices(),
) {
  const { run, response } = await runAll(
    pipelineOf(policies({ outbound: statements })),
    request(req),
    services,
    backend,
  );
  return { run, response, services, context: run.context };
}
