/**
 * The MCP endpoint against hostile JSON-RPC: random methods, params, ids, batches, notifications, raw bytes and
 * header combinations, with a valid access token (the real authorization code flow) and without one. Every answer is
 * prompt, never a 5xx, and never shows a stack trace; the endpoint still serves an ordinary client afterwards.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../doubles/mcp.js';
import { type FuzzService, fuzzParameters, STACK_FRAME, startFuzzService, testTimeout } from './harness.js';

const BUDGET = { runs: 400, seconds: 5 };

const METHODS = [
  'initialize',
  'notifications/initialized',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'prompts/list',
  'logging/setLevel',
  'completion/complete',
  'notifications/cancelled',
  '',
  'rpc.discover',
  '__proto__',
  'constructor',
];
const TOOLS = ['get-course', 'create-course', 'open', 'courses_get-course', 'missing', ''];

/** Mostly what a real client sends, so most requests reach the JSON-RPC methods; sometimes anything else. */
const mostly = <T>(usual: T, others: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: fc.constant(usual), weight: 6 }, { arbitrary: others, weight: 1 });

const id = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 10 }),
  fc.constant(null),
  fc.double(),
  fc.object({ maxDepth: 1 }),
);

const params = fc.oneof(
  fc.record({
    protocolVersion: fc.constantFrom(
      '2025-11-25',
      '2025-06-18',
      '2025-03-26',
      '2024-11-05',
      '1999-01-01',
      '',
    ),
    capabilities: fc.object({ maxDepth: 2 }),
    clientInfo: fc.record({ name: fc.string({ maxLength: 10 }), version: fc.string({ maxLength: 5 }) }),
  }),
  fc.record({
    name: fc.constantFrom(...TOOLS),
    arguments: fc.oneof(
      fc.record(
        {
          id: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('..', '../..', '%2e%2e', '1')),
          rest: fc.string({ maxLength: 30 }),
          title: fc.string(),
        },
        { requiredKeys: [] },
      ),
      fc.jsonValue({ maxDepth: 3 }),
    ),
  }),
  fc.record({ cursor: fc.string({ maxLength: 20 }) }),
  fc.jsonValue({ maxDepth: 3 }),
);

const message = fc.record(
  {
    jsonrpc: mostly<unknown>('2.0', fc.constantFrom('1.0', 2)),
    id,
    method: fc.constantFrom(...METHODS),
    params,
  },
  { requiredKeys: ['method'] },
);

const body = fc.oneof(
  message.map((m) => JSON.stringify(m)),
  fc.array(message, { minLength: 0, maxLength: 6 }).map((batch) => JSON.stringify(batch)),
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom(
    '',
    '[]',
    '{}',
    '[[]]',
    'null',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"courses_get-course","arguments":{"id":"x"}}}',
  ),
);

/** Stands for the session opened before the run, so most messages reach the methods behind the session check. */
const SESSION = '<session>';

const headers = fc.record(
  {
    accept: mostly(
      'application/json, text/event-stream',
      fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/html'),
    ),
    'content-type': mostly(
      'application/json',
      fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1'),
    ),
    'mcp-protocol-version': fc.constantFrom('2025-11-25', '2025-03-26', 'x', ''),
    'mcp-session-id': mostly(
      SESSION,
      fc.oneof(
        fc.string({ maxLength: 40 }).filter((s) => /^[\x21-\x7e]*$/.test(s)),
        fc.constant(''),
      ),
    ),
    // '' leaves the header out: browsers send Origin, other clients do not.
    origin: mostly('', fc.constantFrom('http://evil.example', 'null', 'http://127.0.0.1')),
  },
  { requiredKeys: ['accept', 'content-type', 'mcp-session-id', 'origin'] },
);

describe('fuzzing the MCP endpoint', () => {
  let service: FuzzService;
  const sessions: Record<string, string> = {};

  beforeAll(async () => {
    service = await startFuzzService();
    for (const revision of ['2025-11-25', '2025-03-26'])
      sessions[revision] = await openSession(service.mcpUrl, service.accessToken, revision);
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
  });

  it(
    'answers any JSON-RPC a client sends without a 5xx or a stack trace, and keeps serving',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          mostly('POST', fc.constantFrom('GET', 'DELETE', 'PUT')),
          body,
          headers,
          mostly('valid', fc.constantFrom('missing', 'garbage')),
          async (method, text, extra, token) => {
            const sent: Record<string, string> = { ...extra };
            if (sent['mcp-session-id'] === SESSION)
              sent['mcp-session-id'] =
                sessions[sent['mcp-protocol-version'] ?? ''] ?? sessions['2025-11-25']!;
            const authorization =
              token === 'valid'
                ? `Bearer ${service.accessToken}`
                : token === 'garbage'
                  ? 'Bearer a.b.c'
                  : undefined;
            const response = await fetch(service.mcpUrl, {
              method,
              headers: Object.fromEntries(
                Object.entries({ ...sent, ...(authorization ? { authorization } : {}) }).filter(
                  ([, v]) => v !== '',
                ),
              ),
              ...(method === 'POST' || method === 'PUT' ? { body: text } : {}),
              signal: AbortSignal.timeout(10_000),
            });
            // A GET may open a server-sent event stream that stays open: it is not read. A POST's stream ends.
            const endless =
              method === 'GET' && response.headers.get('content-type')?.includes('text/event-stream');
            if (endless) await response.body?.cancel();
            const answer = endless ? '' : await response.text();
            expect(response.status, answer).toBeLessThan(500);
            // A DELETE ended the session the next runs use: open it again.
            if (method === 'DELETE' && response.ok) {
              for (const [revision, session] of Object.entries(sessions))
                if (session === sent['mcp-session-id'])
                  sessions[revision] = await openSession(service.mcpUrl, service.accessToken, revision);
            }
            expect(answer).not.toMatch(STACK_FRAME);
          },
        ),
        { ...fuzzParameters(BUDGET), timeout: 15_000 },
      );
      // An ordinary client is still served.
      const response = await fetch(service.mcpUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${service.accessToken}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'fuzz', version: '1' },
          },
        }),
      });
      expect(response.status).toBe(200);
    },
    testTimeout(BUDGET),
  );
});
