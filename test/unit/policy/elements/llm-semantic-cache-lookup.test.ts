import { describe, expect, it } from 'vitest';
import { formatDiagnostic, type PolicyLoadError } from '../../../../src/policy/diagnostics.js';
import type { HttpRequest } from '../../../../src/policy/services.js';
import {
  compileAt,
  fakeServices,
  pipelineOf,
  policies,
  request,
  runAll,
} from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

/** Any other text: one of 64 orthogonal directions, picked by a hash of the text (different texts lie apart). */
function elsewhere(text: string): number[] {
  let hash = 7;
  for (const char of text) hash = (hash * 31 + char.charCodeAt(0)) % 61;
  return Array.from({ length: 64 }, (_, i) => (i === hash + 3 ? 1 : 0));
}

/** Prompts and the vectors the fake embeddings backend gives them (the first three of 64 dimensions). */
const VECTORS: Record<string, number[]> = {
  'What is the capital of France?': [1, 0, 0],
  'Tell me the capital city of France': [0.99, 0.14, 0], // cosine distance ≈ 0.0001
  'Name the French capital': [0.8, 0.6, 0], // distance 0.2
};
const vectorOf = (text: string) => {
  const known = VECTORS[text];
  return known === undefined ? elsewhere(text) : [...known, ...new Array<number>(61).fill(0)];
};

function services(backendUrl = 'http://embeddings.test/v1?model=text-embedding-3-small') {
  const base = fakeServices({ embeddings: backendUrl });
  const calls: HttpRequest[] = [];
  return Object.assign(base, {
    calls,
    async fetch(call: HttpRequest) {
      calls.push(call);
      const input = (JSON.parse(call.body!.toString()) as { input: string }).input;
      const embedding = vectorOf(input);
      return {
        status: 200,
        reason: 'OK',
        headers: [],
        body: Buffer.from(JSON.stringify({ data: [{ embedding }] })),
      };
    },
  });
}

const lookup = (attributes = '', children = '') =>
  `<llm-semantic-cache-lookup score-threshold="0.05" embeddings-backend-id="embeddings" embeddings-backend-auth="system-assigned" ${attributes}>${children}</llm-semantic-cache-lookup>`;

const chat = (...messages: [string, string][]) =>
  Buffer.from(
    JSON.stringify({ model: 'gpt-4o', messages: messages.map(([role, content]) => ({ role, content })) }),
  );

const post = (body: Buffer, headers: [string, string][] = []) =>
  request({ method: 'POST', url: 'https://gw.example.com/chat/completions', body, headers });

async function twice(
  s: ReturnType<typeof services>,
  first: Buffer,
  second: Buffer,
  statements = { inbound: lookup(), outbound: '<llm-semantic-cache-store duration="60" />' },
) {
  const pipeline = pipelineOf(policies(statements));
  const answer = {
    headers: [['Content-Type', 'application/json']] as [string, string][],
    body: '{"answer":1}',
  };
  const one = await runAll(pipeline, post(first), s, answer);
  const two = await runAll(pipeline, post(second), s, { ...answer, body: '{"answer":2}' });
  return { one, two };
}

describe('llm-semantic-cache-lookup / -store', () => {
  it('serves the stored answer of a near prompt without calling the backend', async () => {
    const s = services();
    const { one, two } = await twice(
      s,
      chat(['user', 'What is the capital of France?']),
      chat(['user', 'Tell me the capital city of France']),
    );
    expect(one.forwarded).toBe(true);
    expect(two.forwarded).toBe(false);
    expect(two.response.status).toBe(200);
    expect(two.response.body?.toString()).toBe('{"answer":1}');
    expect(s.semanticStores).toHaveLength(1);
    expect(s.semanticStores[0]?.ttl).toBe(60);
  });

  it('asks the embeddings backend at /embeddings with the prompt, the model of its URL and the request credentials', async () => {
    const s = services();
    const pipeline = pipelineOf(policies({ inbound: lookup() }));
    await runAll(
      pipeline,
      post(chat(['user', 'What is the capital of France?']), [['Authorization', 'Bearer k']]),
      s,
    );
    expect(s.calls).toHaveLength(1);
    expect(s.calls[0]?.url).toBe('http://embeddings.test/v1/embeddings?model=text-embedding-3-small');
    expect(JSON.parse(s.calls[0]!.body!.toString())).toEqual({
      input: 'What is the capital of France?',
      model: 'text-embedding-3-small',
    });
    expect(s.calls[0]?.headers).toContainEqual(['Authorization', 'Bearer k']);
  });

  it('keeps an embeddings URL that already ends with /embeddings (an Azure OpenAI deployment)', async () => {
    const s = services('http://aoai.test/openai/deployments/emb/embeddings?api-version=2024-02-01');
    await runAll(pipelineOf(policies({ inbound: lookup() })), post(chat(['user', 'x'])), s);
    expect(s.calls[0]?.url).toBe('http://aoai.test/openai/deployments/emb/embeddings?api-version=2024-02-01');
    expect(JSON.parse(s.calls[0]!.body!.toString())).toEqual({ input: 'x' });
  });

  it('misses when the nearest prompt is farther than score-threshold (a distance)', async () => {
    const s = services();
    const { two } = await twice(
      s,
      chat(['user', 'What is the capital of France?']),
      chat(['user', 'Name the French capital']),
    );
    expect(two.forwarded).toBe(true);
    const loose = services();
    const { two: looseTwo } = await twice(
      loose,
      chat(['user', 'What is the capital of France?']),
      chat(['user', 'Name the French capital']),
      { inbound: lookup().replace('0.05', '0.25'), outbound: '<llm-semantic-cache-store duration="60" />' },
    );
    expect(looseTwo.forwarded).toBe(false);
  });

  it('partitions by vary-by', async () => {
    const s = services();
    const pipeline = pipelineOf(
      policies({
        inbound: lookup('', '<vary-by>@(context.Request.Headers.GetValueOrDefault("x-team", ""))</vary-by>'),
        outbound: '<llm-semantic-cache-store duration="60" />',
      }),
    );
    const prompt = chat(['user', 'What is the capital of France?']);
    await runAll(pipeline, post(prompt, [['x-team', 'a']]), s, { body: '{}' });
    expect((await runAll(pipeline, post(prompt, [['x-team', 'b']]), s, { body: '{}' })).forwarded).toBe(true);
    expect((await runAll(pipeline, post(prompt, [['x-team', 'a']]), s, { body: '{}' })).forwarded).toBe(
      false,
    );
  });

  it('compares without the system messages when ignore-system-messages is true', async () => {
    const statements = (ignore: boolean) => ({
      inbound: lookup(`ignore-system-messages="${ignore}"`),
      outbound: '<llm-semantic-cache-store duration="60" />',
    });
    const first = chat(['system', 'You are terse.'], ['user', 'What is the capital of France?']);
    const second = chat(['system', 'You are verbose and kind.'], ['user', 'What is the capital of France?']);
    const ignoring = services();
    expect((await twice(ignoring, first, second, statements(true))).two.forwarded).toBe(false);
    expect(JSON.parse(ignoring.calls[0]!.body!.toString()).input).toBe('What is the capital of France?');
    const comparing = services();
    expect((await twice(comparing, first, second, statements(false))).two.forwarded).toBe(true);
  });

  it('does not cache a conversation longer than max-message-count, nor a streamed or non-prompt request', async () => {
    const s = services();
    const pipeline = pipelineOf(
      policies({
        inbound: lookup('max-message-count="2"'),
        outbound: '<llm-semantic-cache-store duration="60" />',
      }),
    );
    await runAll(pipeline, post(chat(['user', 'a'], ['assistant', 'b'], ['user', 'c'])), s);
    await runAll(
      pipeline,
      post(Buffer.from('{"stream":true,"messages":[{"role":"user","content":"a"}]}')),
      s,
    );
    await runAll(pipeline, post(Buffer.from('not json')), s);
    expect(s.calls).toHaveLength(0);
    expect(s.semanticStores).toHaveLength(0);
  });

  it('stores only 200 answers unless cache-response is true', async () => {
    const s = services();
    const prompt = chat(['user', 'What is the capital of France?']);
    const pipeline = (store: string) => pipelineOf(policies({ inbound: lookup(), outbound: store }));
    await runAll(pipeline('<llm-semantic-cache-store duration="60" />'), post(prompt), s, { status: 500 });
    expect(s.semanticStores).toHaveLength(0);
    await runAll(
      pipeline('<llm-semantic-cache-store duration="60" cache-response="true" />'),
      post(prompt),
      s,
      {
        status: 500,
      },
    );
    expect(s.semanticStores).toHaveLength(1);
  });

  it('lets the request through uncached when the embeddings backend fails', async () => {
    const s = Object.assign(services(), {
      async fetch(): Promise<never> {
        throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      },
    });
    const { one, two } = await twice(
      s,
      chat(['user', 'What is the capital of France?']),
      chat(['user', 'What is the capital of France?']),
    );
    expect([one.forwarded, two.forwarded]).toEqual([true, true]);
    expect(s.counts).toContainEqual({
      element: 'llm-semantic-cache-lookup',
      outcome: 'failed',
      reason: 'EmbeddingsUnavailable',
    });
  });

  it('behaves alike under the azure-openai-… names', async () => {
    const s = services();
    const { two } = await twice(
      s,
      chat(['user', 'What is the capital of France?']),
      chat(['user', 'What is the capital of France?']),
      {
        inbound: lookup().replaceAll('llm-semantic', 'azure-openai-semantic'),
        outbound: '<azure-openai-semantic-cache-store duration="60" />',
      },
    );
    expect(two.forwarded).toBe(false);
  });

  it('rejects attributes out of their documented ranges, with file, line and column', () => {
    expect(diagnosticsOf(lookup().replace('0.05', '1.5'))[0]).toMatch(
      /llm-semantic-cache-lookup.*score-threshold.*1\.5/,
    );
    expect(diagnosticsOf(lookup('max-message-count="0"'))[0]).toMatch(/max-message-count/);
    expect(diagnosticsOf(lookup().replace('system-assigned', 'user-assigned'))[0]).toMatch(
      /embeddings-backend-auth.*user-assigned/,
    );
    expect(diagnosticsOf('<llm-semantic-cache-lookup score-threshold="0.1" />')[0]).toMatch(
      /embeddings-backend-id/,
    );
    expect(diagnosticsOf('<llm-semantic-cache-store duration="60" />', 'inbound')[0]).toMatch(/inbound/);
    expect(diagnosticsOf('<llm-semantic-cache-store duration="soon" />', 'outbound')[0]).toMatch(
      /duration.*"soon"/,
    );
    try {
      compileAt(policies({ inbound: `\n  ${lookup().replace('0.05', 'high')}` }));
      expect.unreachable();
    } catch (error) {
      const [first] = (error as PolicyLoadError).diagnostics;
      expect(formatDiagnostic(first!)).toMatch(/^operation\.xml:3:\d+: .*score-threshold.*"high"/);
    }
  });
});
