import type { PolicyEngine } from '../../../../src/engine/exchange/policy-engine.js';
import { policyExchanges } from '../../../../src/engine/exchange/policy-exchange.js';
import type { ExchangeSummary } from '../../../../src/engine/exchange/summary.js';
import { StepRecorder } from '../../../../src/engine/trace-steps.js';
import type { ExchangeFactory } from '../../../../src/extproc/exchange.js';
import type { HttpRequest, HttpResponse } from '../../../../src/policy/index.js';
import { type DoubleOutcome, type DoubleRequest, playEnvoy } from '../../../../src/testing/envoy-double.js';
import { GatewayUnderTest } from '../../../../src/testing/gateway-under-test.js';
import { caseServices, stubResponse } from '../../../../src/testing/stubbed-services.js';
import { type ResponseStub, stubsSchema } from '../../../../src/testing/test-file.js';

/**
 * The policy exchange driven in-process, in milliseconds: a configuration written to a scratch folder and compiled
 * as the engine compiles it, Envoy played by src/testing/envoy-double.ts, and a backend scripted per call — for
 * Envoy's forwarded request and for the engine's own calls (retries, redirects) alike.
 */

/** A call that reached the backend. The body of the one Envoy forwarded is the outcome's `backend.body`. */
export interface BackendCall {
  readonly by: 'envoy' | 'engine';
  readonly method: string;
  readonly url: string;
  readonly body: string;
}

/** The backend's answer to a call, given how many calls its path has had (1 for the first); undefined: refused. */
export type ScriptedBackend = (call: BackendCall, hit: number) => ResponseStub | undefined;

export interface ExchangeUnderTest {
  readonly exchanges: ExchangeFactory;
  readonly calls: BackendCall[];
  /** Calls per path (without the query). */
  readonly hits: Map<string, number>;
  /** What each finished exchange told the access log. */
  readonly summaries: ExchangeSummary[];
  readonly origins: ReadonlyMap<string, string>;
  /** Envoy's call to the backend (the double's `answer`). */
  answer(method: string, url: string): ResponseStub | undefined;
  close(): Promise<void>;
}

/**
 * Writes the files (`gateway.yaml` and the policies it names) with `write` (a scratchFolder's, made at the test
 * file's top level) and compiles the configuration.
 */
export async function gatewayOf(
  write: (name: string, text: string) => string,
  files: Readonly<Record<string, string>>,
): Promise<GatewayUnderTest> {
  const written = Object.entries(files).map(([name, text]) => ({ name, file: write(name, text) }));
  const config = written.find(({ name }) => name === 'gateway.yaml');
  if (!config) throw new TypeError(`gatewayOf: no gateway.yaml among ${Object.keys(files).join(', ')}`);
  return GatewayUnderTest.load(config.file);
}

/** The exchanges of the gateway, with the engine options given, calling `backend`. */
export async function exchangeUnderTest(
  gateway: GatewayUnderTest,
  backend: ScriptedBackend,
  engine: Partial<Pick<PolicyEngine, 'backendRouting' | 'maxRequestBodyBytes'>> = {},
): Promise<ExchangeUnderTest> {
  const compiled = gateway.compiled({});
  const stubbed = await caseServices({
    caseName: 'exchange',
    stubs: stubsSchema.parse({}),
    identities: compiled.gateway.config.identities,
    backends: compiled.gateway.backends,
    observer: new StepRecorder(),
  });
  const calls: BackendCall[] = [];
  const hits = new Map<string, number>();
  const call = (made: BackendCall) => {
    calls.push(made);
    const path = new URL(made.url).pathname;
    const hit = (hits.get(path) ?? 0) + 1;
    hits.set(path, hit);
    return backend(made, hit);
  };
  // The engine's own calls to the backend: as the stubbed services answer a failed stub.
  const fetch = async (request: HttpRequest): Promise<HttpResponse> => {
    const body = request.body?.toString('utf8') ?? '';
    const stub = call({ by: 'engine', method: request.method, url: request.url, body });
    if (stub === undefined || stub.fail === 'connection')
      throw Object.assign(new Error(`nothing answers ${request.url}`), { code: 'ECONNREFUSED' });
    if (stub.fail === 'timeout') throw Object.assign(new Error('timeout'), { code: 'TIMEOUT' });
    return stubResponse(stub);
  };
  const summaries: ExchangeSummary[] = [];
  const exchanges = policyExchanges({
    catalog: compiled.gateway.catalog,
    routes: compiled.routes,
    services: { ...stubbed.services, fetch },
    subscriptions: compiled.subscriptions,
    onExchangeEnd: (summary) => summaries.push(summary),
    ...engine,
  });
  return {
    exchanges,
    calls,
    hits,
    summaries,
    origins: compiled.origins,
    answer: (method, url) => call({ by: 'envoy', method, url, body: '' }),
    close: () => stubbed.close(),
  };
}

/** One request through Envoy (the double) and the exchange. */
export function play(
  exchange: ExchangeUnderTest,
  request: Partial<DoubleRequest> & { readonly path: string },
): Promise<DoubleOutcome> {
  return playEnvoy(
    exchange.exchanges,
    {
      method: 'GET',
      authority: 'gateway.test',
      scheme: 'https',
      headers: [],
      body: undefined,
      clientAddress: '10.0.0.1',
      ...request,
    },
    exchange.origins,
    (method, url) => exchange.answer(method, url),
  );
}

/** A response stub: status, headers, and a text body. */
export function answer(status: number, body = '', headers: Record<string, string> = {}): ResponseStub {
  return { status, headers: { 'content-type': 'text/plain', ...headers }, body };
}

/** A policy document: `<base />` first in each section, then the statements; `replace` sections hold only them. */
export function policy(
  sections: { inbound?: string; backend?: string; outbound?: string; onError?: string },
  replace: readonly ('inbound' | 'backend' | 'outbound' | 'onError')[] = [],
): string {
  const section = (name: string, key: 'inbound' | 'backend' | 'outbound' | 'onError') =>
    `<${name}>${replace.includes(key) ? '' : '<base />'}${sections[key] ?? ''}</${name}>`;
  return `<policies>${section('inbound', 'inbound')}${section('backend', 'backend')}${section('outbound', 'outbound')}${section('on-error', 'onError')}</policies>`;
}
