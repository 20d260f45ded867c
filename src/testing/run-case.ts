/**
 * One test case run: the request it describes, through the policy exchange the engine runs for live traffic
 * (matching, subscriptions, the compiled pipeline), with Envoy played in-process and the case's stubs for
 * everything outside; what came out, for the expectations to check.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { policyExchanges } from '../engine/exchange/policy-exchange.js';
import { formatSteps, StepRecorder, type TraceStep } from '../engine/trace-steps.js';
import {
  ApiInfo,
  GroupInfo,
  type LastErrorInfo,
  ProductInfo,
  SubscriptionInfo,
  UserInfo,
} from '../expr/index.js';
import type { ObservedRun, TraceEntry } from '../policy/index.js';
import { redactText } from '../redact.js';
import { type DoubleResponse, playEnvoy, type ReceivedRequest } from './envoy-double.js';
import type { GatewayUnderTest } from './gateway-under-test.js';
import type { MissingStub } from './stubbed-identities.js';
import { caseServices, plainValue, type RecordedCall, runtimeValue } from './stubbed-services.js';
import { mergeStubs, type Stubs, type TestCase } from './test-file.js';
import type { TestKeys } from './test-keys.js';

export interface CaseOutcome {
  readonly response: DoubleResponse;
  readonly backend: ReceivedRequest | undefined;
  readonly calls: readonly RecordedCall[];
  readonly variables: ReadonlyMap<string, unknown>;
  readonly lastError: Readonly<Record<string, string>> | null;
  readonly counters: ReadonlyMap<string, number>;
  /** Cached values after the request, for the keys the expectations name. */
  readonly cache: ReadonlyMap<string, unknown>;
  readonly steps: readonly TraceStep[];
  /** The readable trace: the steps, then the trace entries (trace element, context.Trace). */
  readonly trace: readonly string[];
  /** `file:line:col` of the statement that decided the outcome (the last that answered, refused or failed). */
  readonly decidedAt: string | undefined;
  readonly logs: readonly string[];
  /** Credentials the policies asked for that the case did not stub (each fails the case). */
  readonly missing: readonly MissingStub[];
  /** A text of the request as `portcullis run` shows it: its secret values and every credential shape removed. */
  readonly redact: (text: string) => string;
}

export interface CaseInput {
  readonly testCase: TestCase;
  readonly fileStubs: Stubs;
  /** The folder of the test file (a client certificate path is relative to it). */
  readonly directory: string;
  readonly gateway: GatewayUnderTest;
  readonly keys: TestKeys;
}

export async function runCase(input: CaseInput): Promise<CaseOutcome> {
  const { testCase, gateway } = input;
  const stubs = mergeStubs(input.fileStubs, testCase.stubs);
  const compiled = gateway.compiled(testCase.context.namedValues);
  const recorder = new StepRecorder((run) => seedContext(run, testCase));
  const services = await caseServices({
    caseName: testCase.name,
    stubs,
    identities: compiled.gateway.config.identities,
    backends: compiled.gateway.backends,
    observer: recorder,
    extra: (request) => input.keys.answer(request),
  });
  try {
    const exchanges = policyExchanges({
      catalog: compiled.gateway.catalog,
      routes: compiled.routes,
      services: services.services,
      subscriptions: compiled.subscriptions,
      maxRequestBodyBytes: compiled.gateway.config.gateway.limits.maxRequestBodyBytes,
      trust: gateway.trust,
    });
    const request = await clientRequest(input, services.services.clock.now());
    const played = await playEnvoy(exchanges, request, compiled.origins, services.backendAnswer);
    const run = recorder.runs.at(-1);
    const cache = new Map<string, unknown>();
    for (const key of Object.keys(testCase.expect.cache ?? {})) cache.set(key, await services.valueOf(key));
    return {
      response: played.response,
      backend: played.backend,
      calls: services.calls,
      variables: new Map([...(run?.context.variables.entries() ?? [])].map(([k, v]) => [k, plainValue(v)])),
      lastError: lastErrorOf(run?.context.lastError ?? null),
      counters: services.counters,
      cache,
      steps: recorder.steps,
      trace: [...formatSteps(recorder.steps).map(shownPlaces), ...services.traces.map(traceLine)],
      decidedAt: shownPlaces(decidedAt(recorder.steps) ?? '') || undefined,
      logs: services.logs,
      missing: services.missing,
      redact: run === undefined ? redactText : (text) => run.redact(text),
    };
  } finally {
    await services.close();
  }
}

/** Files under the working folder shown relative to it, as a user typed them. */
export function shownPlaces(text: string): string {
  return text.split(`${process.cwd()}${path.sep}`).join('');
}

function traceLine(entry: TraceEntry): string {
  const metadata = entry.metadata.map(([name, value]) => ` ${name}=${value}`).join('');
  return `trace ${entry.source} ${entry.severity}: ${entry.message}${metadata}`;
}

function decidedAt(steps: readonly TraceStep[]): string | undefined {
  for (let index = steps.length - 1; index >= 0; index--) {
    const outcome = steps[index]!.outcome;
    if (outcome !== 'next' && outcome !== undefined) return steps[index]!.at;
  }
  return steps.at(-1)?.at;
}

function lastErrorOf(error: LastErrorInfo | null): Record<string, string> | null {
  if (error === null) return null;
  const { source, reason, message, scope, section, path: errorPath, policyId } = error;
  return { source, reason, message, scope, section, path: errorPath, policyId };
}

/** The case's context before any policy runs: variables, and the identity the case gives instead of a key's. */
function seedContext(run: ObservedRun, testCase: TestCase): void {
  const { context } = testCase;
  for (const [name, value] of Object.entries(context.variables))
    run.context.variables.set(name, runtimeValue(value));
  if (context.subscription) run.context.subscription = new SubscriptionInfo(context.subscription);
  if (context.product)
    run.context.product = new ProductInfo({
      ...context.product,
      apis: ((context.product.apis as unknown[] | undefined) ?? []).map((api) => new ApiInfo(api as object)),
      groups: groupsOf(context.product.groups),
    });
  if (context.user)
    run.context.user = new UserInfo({ ...context.user, groups: groupsOf(context.user.groups) });
}

function groupsOf(groups: unknown): GroupInfo[] {
  if (!Array.isArray(groups)) return [];
  return groups.map((group) =>
    typeof group === 'string'
      ? new GroupInfo(group, group)
      : new GroupInfo(String(group?.id ?? ''), String(group?.name ?? group?.id ?? '')),
  );
}

/** The request as the client sends it: the operation's URL filled in, key, token and body added. */
async function clientRequest(input: CaseInput, nowMs: number) {
  const { testCase, gateway } = input;
  const request = testCase.request;
  const config = gateway.loaded.config;
  const api = config.apis.find((candidate) => candidate.id === testCase.api);
  const operation = api?.operations.find(
    (candidate) => (candidate.id ?? `${candidate.method} ${candidate.urlTemplate}`) === testCase.operation,
  );
  let pathAndQuery =
    request.path ??
    `/${api?.urlSuffix ?? ''}${fillTemplate(operation?.urlTemplate ?? '/', request.parameters)}`;
  const query = new URLSearchParams(request.query).toString();
  if (query !== '') pathAndQuery += `${pathAndQuery.includes('?') ? '&' : '?'}${query}`;
  const headers: [string, string][] = Object.entries(request.headers);
  if (request.subscriptionKey !== undefined)
    headers.push([api?.subscriptionKeyNames.header ?? 'Ocp-Apim-Subscription-Key', request.subscriptionKey]);
  if (request.jwt !== undefined) {
    const token = await input.keys.sign(request.jwt.key, request.jwt.claims, nowMs, request.jwt.expiresIn);
    headers.push([request.jwt.header, request.jwt.scheme === '' ? token : `${request.jwt.scheme} ${token}`]);
  }
  let body: Buffer | undefined;
  if (request.body !== undefined && request.body !== null) {
    if (typeof request.body === 'string') body = Buffer.from(request.body);
    else {
      body = Buffer.from(JSON.stringify(request.body));
      if (!headers.some(([name]) => name.toLowerCase() === 'content-type'))
        headers.push(['content-type', 'application/json']);
    }
  }
  const certificatePem =
    request.clientCertificate === undefined
      ? undefined
      : await readFile(path.resolve(input.directory, request.clientCertificate), 'utf8');
  return {
    method: (request.method ?? operation?.method ?? 'GET').toUpperCase(),
    path: pathAndQuery,
    authority: api?.hostnames?.[0] && request.host === 'localhost' ? api.hostnames[0] : request.host,
    scheme: request.scheme,
    headers,
    body,
    clientAddress: request.clientAddress,
    ...(certificatePem === undefined ? {} : { certificatePem }),
  };
}

/** `/api/Course/{id}` with `{ id: 7 }` → `/api/Course/7`; a parameter not given stays a placeholder value. */
export function fillTemplate(template: string, parameters: Readonly<Record<string, string>>): string {
  return template.replace(/\{\*?([^}]+)\}/g, (_whole, name: string) => {
    const value = parameters[name];
    return value === undefined ? `sample-${name}` : encodeURIComponent(value).replace(/%2F/gi, '/');
  });
}
