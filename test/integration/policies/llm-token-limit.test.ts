import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countTextTokens, estimatePromptTokens } from '../../../src/policy/shared/prompt-tokens.js';
import { type OpenAiBackend, startOpenAiBackend } from '../../doubles/openai-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * llm-token-limit / azure-openai-token-limit through the real Envoy and engine, in front of an OpenAI-compatible
 * backend: tokens are counted from the usage the backend reports (JSON and event streams), limits refuse with API
 * Management's statuses, an estimated prompt that does not fit never reaches the backend, and a streamed answer
 * passes through chunk by chunk.
 */
describe('llm-token-limit through Envoy', () => {
  let backend: OpenAiBackend;
  let gateway: GatewayStack;
  // Each test counts on its own key.
  let key = 0;
  let client = '';

  beforeAll(async () => {
    backend = await startOpenAiBackend();
    const keyed = '@(context.Request.Headers.GetValueOrDefault(&quot;X-Client&quot;, &quot;anonymous&quot;))';
    gateway = await startGateway(
      `apis:\n${apiYaml('rate', backend.url, [
        ['chat', 'POST', '/chat/completions', 'rate.xml'],
        ['responses', 'POST', '/responses', 'rate.xml'],
        ['embeddings', 'POST', '/embeddings', 'rate.xml'],
      ])}\n${apiYaml('quota', backend.url, [['chat', 'POST', '/chat/completions', 'quota.xml']])}\n${apiYaml(
        'estimate',
        backend.url,
        [['chat', 'POST', '/chat/completions', 'estimate.xml']],
      )}\n${apiYaml('azure', backend.url, [['chat', 'POST', '/chat/completions', 'azure.xml']])}\n${apiYaml(
        'plain',
        backend.url,
        [['chat', 'POST', '/chat/completions']],
      )}\n`,
      {
        'rate.xml': policy({
          inbound: `<llm-token-limit counter-key="${keyed}" tokens-per-minute="100" estimate-prompt-tokens="false"
              remaining-tokens-header-name="X-Remaining-Tokens" remaining-tokens-variable-name="remaining"
              tokens-consumed-header-name="X-Tokens-Consumed" tokens-consumed-variable-name="consumed" />`,
          outbound:
            '<set-header name="X-Consumed-Variable" exists-action="override"><value>@(context.Variables["consumed"].ToString())</value></set-header>',
        }),
        'quota.xml': policy({
          inbound: `<llm-token-limit counter-key="${keyed}" token-quota="50" token-quota-period="Daily"
              remaining-quota-tokens-header-name="X-Remaining-Quota" retry-after-variable-name="retry" />`,
        }),
        'estimate.xml': policy({
          inbound: `<llm-token-limit counter-key="${keyed}" tokens-per-minute="40" estimate-prompt-tokens="true"
              retry-after-header-name="X-Retry-After" />`,
        }),
        'azure.xml': policy({
          inbound: `<azure-openai-token-limit counter-key="${keyed}" tokens-per-minute="60" estimate-prompt-tokens="false" />`,
        }),
      },
    );
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  beforeEach(() => {
    client = `client-${++key}`;
    backend.configure({ usage: { promptTokens: 10, completionTokens: 20 } });
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Client': client, ...headers },
      body: JSON.stringify(body),
    });
  const chat = (stream = false, includeUsage = false) => ({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'Say hello.' }],
    ...(stream ? { stream: true } : {}),
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
  });

  it('counts the usage of each answer: 100 tokens per minute admit 4 answers of 30, then 429 until tokens free', async () => {
    const statuses: number[] = [];
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await post('/rate/chat/completions', chat());
      statuses.push(response.status);
      remaining.push(response.headers.get('x-remaining-tokens'));
      if (response.status === 429) {
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(await response.json()).toEqual({
          statusCode: 429,
          message: `Token limit is exceeded. Try again in ${response.headers.get('retry-after')} seconds.`,
        });
      } else {
        await response.json();
        expect(response.headers.get('x-tokens-consumed')).toBe('30');
        expect(response.headers.get('x-consumed-variable')).toBe('30');
      }
    }
    // Without an estimate a call is admitted while the key is under its limit: 0, 30, 60, 90 used, then 120.
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expect(remaining.slice(0, 4)).toEqual(['100', '70', '40', '10']);
    expect(backend.received.filter((r) => r.headers['x-client'] === client)).toHaveLength(4);
  });

  it('counts embeddings and Responses API usage as well', async () => {
    backend.configure({ usage: { promptTokens: 60, completionTokens: 0 } });
    expect((await post('/rate/embeddings', { model: 'text-embedding-3-small', input: 'hello' })).status).toBe(
      200,
    );
    backend.configure({ usage: { promptTokens: 20, completionTokens: 20 } });
    const responses = await post('/rate/responses', { model: 'gpt-4o', input: 'hi' });
    expect(responses.status).toBe(200);
    expect(responses.headers.get('x-remaining-tokens')).toBe('40');
    await responses.json();
    // 60 + 40 = 100 used.
    expect((await post('/rate/responses', { model: 'gpt-4o', input: 'hi' })).status).toBe(429);
  });

  it('counts a streamed answer from its include_usage chunk, as it passes', async () => {
    backend.configure({ usage: { promptTokens: 45, completionTokens: 50 } });
    const first = await post('/rate/chat/completions', chat(true, true));
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toContain('text/event-stream');
    const text = await first.text();
    expect(text).toContain('"total_tokens":95');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const second = await post('/rate/chat/completions', chat());
    expect(second.headers.get('x-remaining-tokens')).toBe('5');
    await second.text();
    expect((await post('/rate/chat/completions', chat())).status).toBe(429);
  });

  it('counts a Responses API stream from its response.completed event', async () => {
    backend.configure({ usage: { promptTokens: 40, completionTokens: 61 } });
    const first = await post('/rate/responses', { model: 'gpt-4o', input: 'hi', stream: true });
    expect(await first.text()).toContain('response.completed');
    expect((await post('/rate/responses', { model: 'gpt-4o', input: 'hi' })).status).toBe(429);
  });

  it('passes a stream on chunk by chunk: the client reads the first before the backend produces the last', async () => {
    const gate = backend.holdNextStream();
    const response = await post('/rate/chat/completions', chat(true, true));
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await gate.firstChunkWritten;
    const first = await reader.read();
    const seen = Buffer.from(first.value!).toString('utf8');
    expect(seen).toContain('"content":"Hello"');
    expect(seen).not.toContain('[DONE]');
    gate.release();
    let rest = '';
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      rest += Buffer.from(next.value).toString('utf8');
    }
    expect(rest).toContain('data: [DONE]');
    // Counted once the stream was over: 30 of 100.
    const after = await post('/rate/chat/completions', chat());
    expect(after.headers.get('x-remaining-tokens')).toBe('70');
    await after.text();
  });

  it('counts a stream without usage from its estimated prompt and the completion text it carried', async () => {
    backend.configure({ usage: null, pieces: ['word '.repeat(80)] });
    const first = await post('/rate/chat/completions', chat(true));
    expect(first.status).toBe(200);
    await first.text();
    backend.configure({ pieces: undefined });
    const after = await post('/rate/chat/completions', chat());
    // The estimate (prompt: about 10 tokens) and about 80 completion tokens leave less than 20 of the 100.
    const left = Number(after.headers.get('x-remaining-tokens'));
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(20);
    await after.text();
  });

  it('counts a JSON answer without usage from its estimated prompt and its completion text, however long', async () => {
    const story = 'Once upon a time, a gateway counted tokens. '.repeat(8);
    backend.configure({ usage: null, pieces: [story] });
    const first = await post('/rate/chat/completions', chat());
    expect(first.status).toBe(200);
    expect(((await first.json()) as { usage?: unknown }).usage).toBeUndefined();
    backend.configure({ pieces: undefined });
    const counted = estimatePromptTokens(chat()) + countTextTokens(story, 'o200k_base');
    expect(counted).toBeGreaterThan(80);
    expect(first.headers.get('x-tokens-consumed')).toBe(String(counted));
    // Counted in the window, not only reported.
    const after = await post('/rate/chat/completions', chat());
    expect(after.headers.get('x-remaining-tokens')).toBe(String(100 - counted));
    await after.text();
  });

  it('refuses over the quota with 403 and the time to the next period', async () => {
    const first = await post('/quota/chat/completions', chat());
    expect(first.status).toBe(200);
    expect(first.headers.get('x-remaining-quota')).toBe('50');
    await first.text();
    const second = await post('/quota/chat/completions', chat());
    expect(second.headers.get('x-remaining-quota')).toBe('20');
    await second.text();
    const refused = await post('/quota/chat/completions', chat());
    expect(refused.status).toBe(403);
    const retryAfter = Number(refused.headers.get('retry-after'));
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    expect(Math.abs(retryAfter - (midnight - now.getTime()) / 1000)).toBeLessThan(5);
    const body = (await refused.json()) as { statusCode: number; message: string };
    expect(body.statusCode).toBe(403);
    expect(body.message).toMatch(/^Token quota is exceeded\. Try again in \d\d:\d\d:\d\d\.$/);
  });

  it('refuses an estimated prompt that does not fit before calling the backend', async () => {
    const long = {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Please read this carefully. '.repeat(10) }],
    };
    const estimate = estimatePromptTokens(long);
    expect(estimate).toBeGreaterThan(40);
    const before = backend.received.length;
    const refused = await post('/estimate/chat/completions', long);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-retry-after')).not.toBeNull();
    await refused.text();
    expect(backend.received.length).toBe(before);
    // A short prompt fits, and is counted before the backend answers.
    const short = await post('/estimate/chat/completions', chat());
    expect(short.status).toBe(200);
    await short.text();
    expect(backend.received.length).toBe(before + 1);
  });

  it('runs under its azure-openai name the same way', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await post('/azure/chat/completions', chat());
      statuses.push(response.status);
      await response.text();
    }
    expect(statuses).toEqual([200, 200, 429]);
  });
});
