import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockEmbedding, type OpenAiBackend, startOpenAiBackend } from '../../doubles/openai-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';
import { type RunningRedis, startRedis } from '../../processes/redis.js';

/** Prompts with chosen nearness (cosine distances to the first: ≈0.0001 and 0.2); others embed by their letters. */
const NEAR: Record<string, number[]> = {
  'What is the capital of France?': [1, 0, 0],
  'Tell me the capital city of France': [0.99, 0.14, 0],
  'Name the French capital': [0.8, 0.6, 0],
};
const embed = (input: string) => [
  ...(NEAR[input] ?? [0, 0, 0]),
  ...(NEAR[input] ? new Array(32).fill(0) : mockEmbedding(input)),
];

type StateKind = 'in-process' | 'embedded' | 'redis';

/**
 * llm-semantic-cache-lookup / -store through the real Envoy and engine, with the vectors in each place the engine
 * keeps them: in-process, the embedded LMDB store (state.dataDir) and Redis. The model and the embeddings come
 * from one OpenAI-compatible mock, which records every call, so a hit shows as a chat call that never came.
 */
describe.each<StateKind>(['in-process', 'embedded', 'redis'])('semantic cache through Envoy (%s)', (kind) => {
  let model: OpenAiBackend;
  let redis: RunningRedis | undefined;
  let dataDir: string | undefined;
  let gateway: GatewayStack;

  const lookup = (attributes: string, children = '') =>
    `<llm-semantic-cache-lookup score-threshold="0.05" embeddings-backend-id="embeddings" embeddings-backend-auth="system-assigned" ${attributes}>${children}</llm-semantic-cache-lookup>`;
  const cached = (inbound: string) =>
    policy({ inbound, outbound: '<llm-semantic-cache-store duration="60" />' });

  beforeAll(async () => {
    model = await startOpenAiBackend({ embed });
    let state = '';
    if (kind === 'redis') {
      redis = await startRedis();
      state = `state:\n  redis: { url: "${redis.url}", keyPrefix: "sc:" }\n`;
    } else if (kind === 'embedded') {
      dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-semantic-'));
      state = `state:\n  dataDir: "${dataDir}"\n`;
    }
    gateway = await startGateway(
      `${state}backends:
  - { id: embeddings, url: "${model.url}/v1?model=text-embedding-3-small" }
apis:
${apiYaml('llm', `${model.url}/v1`, [
  ['chat', 'POST', '/chat/completions', 'cached.xml'],
  ['teams', 'POST', '/teams/chat/completions', 'by-team.xml'],
  ['no-system', 'POST', '/no-system/chat/completions', 'no-system.xml'],
  ['example', 'POST', '/example/chat/completions', 'example.xml'],
])}
`,
      {
        'cached.xml': cached(lookup('')),
        'by-team.xml': cached(
          lookup('', '<vary-by>@(context.Request.Headers.GetValueOrDefault("x-team", ""))</vary-by>'),
        ),
        'no-system.xml': cached(lookup('ignore-system-messages="true"')),
        'example.xml': readFileSync(
          new URL('../../../examples/llm/policies/semantic-cache.xml', import.meta.url),
          'utf8',
        ),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await model?.close();
    await redis?.close();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  const chatCalls = () => model.received.filter((r) => r.endpoint === 'chat/completions').length;
  const ask = async (user: string, options: { path?: string; system?: string; team?: string } = {}) => {
    const response = await fetch(`${gateway.url}/llm${options.path ?? ''}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(options.team ? { 'x-team': options.team } : {}) },
      body: JSON.stringify({
        model: 'gpt-4o',
        messages: [
          ...(options.system ? [{ role: 'system', content: options.system }] : []),
          { role: 'user', content: user },
        ],
      }),
    });
    expect(response.status).toBe(200);
    return response.json();
  };

  it('answers a near prompt from the cache: the model is not called again', async () => {
    model.configure({ pieces: ['Paris.'] });
    const first = await ask('What is the capital of France?');
    const calls = chatCalls();
    model.configure({ pieces: ['Another answer.'] });
    const second = await ask('Tell me the capital city of France');
    expect(second).toEqual(first);
    expect(chatCalls()).toBe(calls);
    const embeddings = model.received.filter((r) => r.endpoint === 'embeddings');
    expect(embeddings.at(-1)?.json).toEqual({
      input: 'Tell me the capital city of France',
      model: 'text-embedding-3-small',
    });
    if (kind === 'redis') expect(redis!.cli('KEYS', 'sc:sem:*').trim().split('\n')).toHaveLength(3);
  });

  it('forwards a prompt farther than score-threshold, and an unrelated one', async () => {
    const calls = chatCalls();
    await ask('Name the French capital');
    await ask('How do I bake bread?');
    expect(chatCalls()).toBe(calls + 2);
  });

  it('keeps the vary-by partitions apart', async () => {
    const path = '/teams';
    await ask('What is the capital of France?', { path, team: 'red' });
    const calls = chatCalls();
    await ask('What is the capital of France?', { path, team: 'blue' });
    expect(chatCalls()).toBe(calls + 1);
    await ask('Tell me the capital city of France', { path, team: 'red' });
    expect(chatCalls()).toBe(calls + 1);
  });

  it('compares the prompt without its system messages when asked', async () => {
    const path = '/no-system';
    await ask('What is the capital of France?', { path, system: 'Be terse.' });
    const calls = chatCalls();
    await ask('What is the capital of France?', { path, system: 'Be verbose, with many examples.' });
    expect(chatCalls()).toBe(calls);
  });

  it('runs the example policy (examples/llm/policies/semantic-cache.xml)', async () => {
    const path = '/example';
    await ask('What is the capital of France?', { path, system: 'Be terse.' });
    const calls = chatCalls();
    await ask('Tell me the capital city of France', { path });
    expect(chatCalls()).toBe(calls);
  });
});
