/**
 * The engine's ext_proc stream against whatever arrives on the wire: random and mutated ProcessingRequest sequences
 * over a real gRPC connection to the real engine (real policies that read bodies, rewrite, choose and answer
 * themselves). Each message gets an answer or the stream is closed with a status — promptly; an immediate answer
 * never carries a stack trace; no handler throws; and after every sequence a well-formed request is still served.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessingRequest, ProcessingResponse } from '../../src/extproc/messages.js';
import { connectFakeEnvoy, headerMap } from '../doubles/extproc-client.js';
import { EXTPROC_GATEWAY } from '../processes/extproc-gateway.js';
import { type RunningEngine, startEngine } from '../processes/gateway.js';
import { fuzzParameters, STACK_FRAME, testTimeout } from './harness.js';

const BUDGET = { runs: 300, seconds: 5 };

const POLICY = `<policies>
  <inbound>
    <base />
    <set-variable name="body" value="@(context.Request.Body?.As<string>(preserveContent: true) ?? "")" />
    <choose>
      <when condition="@(((string)context.Variables["body"]).Contains("refuse"))">
        <return-response><set-status code="400" reason="Refused" /><set-body>@("no: " + context.Request.Url.Path)</set-body></return-response>
      </when>
      <when condition="@(context.Request.Headers.GetValueOrDefault("x-json", "") != "")">
        <set-body>@(JObject.Parse(context.Request.Headers.GetValueOrDefault("x-json", "{}")).ToString())</set-body>
      </when>
    </choose>
    <rewrite-uri template="@("/v2" + context.Request.Url.Path)" />
    <set-header name="x-id" exists-action="override"><value>@(context.Request.MatchedParameters.GetValueOrDefault("id", ""))</value></set-header>
  </inbound>
  <backend><base /></backend>
  <outbound>
    <base />
    <set-header name="x-length" exists-action="override"><value>@(context.Response.Body.As<string>().Length.ToString())</value></set-header>
  </outbound>
  <on-error><base /></on-error>
</policies>`;

const PATHS = [
  '/courses/api/Course/1',
  '/courses/api/Course',
  '/courses/open/a/b',
  '/plain/x',
  '/',
  '*',
  '',
  '/courses/api/Course/%ZZ',
  '/courses/../plain/x',
  '/courses/api/Course/1?x=%',
  '//courses//api',
];
const HEADER_NAMES = [
  ':path',
  ':method',
  ':authority',
  ':scheme',
  'content-type',
  'content-length',
  'x-json',
  'transfer-encoding',
  'ocp-apim-subscription-key',
  'authorization',
  'x-forwarded-for',
  ':status',
  'cookie',
];

const headerValue = fc.oneof(
  fc.constantFrom(...PATHS, 'GET', 'POST', 'application/json', '{"a":1}', '{', '-1', '99999999999999999999'),
  fc.string({ maxLength: 40 }),
);
const headers = fc.array(
  fc.tuple(fc.oneof(fc.constantFrom(...HEADER_NAMES), fc.string({ maxLength: 12 })), headerValue),
  { maxLength: 8 },
);

/** A well-formed request head with random extras, or random headers alone. */
const requestHead = fc.oneof(
  fc
    .record({
      path: fc.constantFrom(...PATHS),
      method: fc.constantFrom('GET', 'POST', 'DELETE', 'BREW', ''),
      extra: headers,
    })
    .map(({ path, method, extra }) => [
      [':path', path],
      [':method', method],
      [':authority', 'gateway.test'],
      [':scheme', 'http'],
      ...extra,
    ]),
  headers,
);

type Pairs = readonly (readonly string[])[];

const toMap = (pairs: Pairs) => ({
  headers: pairs.map(([key = '', value = '']) => ({ key, raw_value: Buffer.from(value) })),
});

const body = fc.oneof(
  fc.constantFrom('refuse', '{"a":1}', ''),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 4096 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
);

const message: fc.Arbitrary<ProcessingRequest> = fc.oneof(
  fc
    .record({ head: requestHead, eos: fc.boolean() })
    .map(({ head, eos }) => ({ request_headers: { headers: toMap(head), end_of_stream: eos } })),
  fc
    .record({ text: body, eos: fc.boolean() })
    .map(({ text, eos }) => ({ request_body: { body: Buffer.from(text, 'latin1'), end_of_stream: eos } })),
  headers.map((pairs) => ({ request_trailers: { trailers: toMap(pairs) } })),
  fc
    .record({
      status: fc.oneof(fc.constantFrom('200', '404', '503'), fc.string({ maxLength: 4 })),
      extra: headers,
      eos: fc.boolean(),
    })
    .map(({ status, extra, eos }) => ({
      response_headers: { headers: toMap([[':status', status], ...extra]), end_of_stream: eos },
    })),
  fc
    .record({ text: body, eos: fc.boolean() })
    .map(({ text, eos }) => ({ response_body: { body: Buffer.from(text, 'latin1'), end_of_stream: eos } })),
  headers.map((pairs) => ({ response_trailers: { trailers: toMap(pairs) } })),
  fc.constant({}),
);

/** A well-formed exchange's order with random content, or any order at all. */
const sequence = fc.oneof(
  fc
    .tuple(requestHead, body, fc.constantFrom('200', '500'), body)
    .map(([head, requestBody, status, responseBody]): ProcessingRequest[] => [
      { request_headers: { headers: toMap(head), end_of_stream: false } },
      { request_body: { body: Buffer.from(requestBody, 'latin1'), end_of_stream: true } },
      { response_headers: { headers: toMap([[':status', status]]), end_of_stream: false } },
      { response_body: { body: Buffer.from(responseBody, 'latin1'), end_of_stream: true } },
    ]),
  fc.array(message, { minLength: 1, maxLength: 8 }),
);

const goodbye = fc.constantFrom('finish', 'reset', 'close-client');

describe('fuzzing the ext_proc stream over real gRPC', () => {
  let running: RunningEngine;
  const handlerErrors: string[] = [];

  beforeAll(async () => {
    running = await startEngine(
      EXTPROC_GATEWAY,
      { 'courses.xml': POLICY },
      {},
      {
        onHandlerError: (error, phase) => handlerErrors.push(`${phase}: ${(error as Error).stack}`),
      },
    );
  });
  afterAll(async () => {
    await running?.engine.shutdown(100);
  });

  /** A request the engine must still serve: the plain API, headers only. */
  async function stillServes(): Promise<void> {
    const envoy = connectFakeEnvoy(running.engine.port);
    try {
      const answer = await envoy.exchange({
        request_headers: {
          headers: headerMap({
            ':path': '/plain/x',
            ':method': 'GET',
            ':authority': 'gateway.test',
            ':scheme': 'http',
          }),
          end_of_stream: true,
        },
      });
      expect(answer.request_headers?.response ?? answer.immediate_response).toBeDefined();
    } finally {
      envoy.finish();
      envoy.close();
    }
  }

  it(
    'answers or closes every stream promptly, leaks no stack trace, throws in no handler, and keeps serving',
    async () => {
      const heapBefore = process.memoryUsage().heapUsed;
      await fc.assert(
        fc
          .asyncProperty(sequence, goodbye, async (messages, end) => {
            const envoy = connectFakeEnvoy(running.engine.port);
            const answers: ProcessingResponse[] = [];
            try {
              for (const request of messages) {
                envoy.send(request);
                const answer = await envoy.next(3000).catch((error: Error) => error);
                if (answer instanceof Error) {
                  // Closed by the engine (a protocol error ends the stream with a status) — fine; silence is not.
                  expect(answer.message).not.toBe('no answer');
                  break;
                }
                answers.push(answer);
                if (answer.immediate_response) break;
              }
            } finally {
              if (end === 'finish') envoy.finish();
              else if (end === 'reset') envoy.reset();
              envoy.close();
            }
            for (const answer of answers) {
              const text = answer.immediate_response?.body?.toString() ?? '';
              expect(text).not.toMatch(STACK_FRAME);
              if ((answer.immediate_response?.status.code ?? 0) >= 500)
                expect(text).not.toMatch(/TypeError|ReferenceError|RangeError/);
            }
            expect(handlerErrors).toEqual([]);
            await stillServes();
          })
          .afterEach(() => {}),
        { ...fuzzParameters(BUDGET), timeout: 15_000 },
      );
      // No runaway allocation: what the runs kept alive is bounded (generously — the heap is not collected on demand).
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(256 * 1024 * 1024);
    },
    testTimeout(BUDGET),
  );
});
