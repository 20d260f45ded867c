import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimatePromptTokens } from '../../../src/policy/shared/prompt-tokens.js';
import { type OpenAiBackend, startOpenAiBackend } from '../../doubles/openai-backend.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';
import { type RunningRedis, startRedis } from '../../processes/redis.js';
import { until } from '../../processes/wait.js';
import { type SharedStateStack, startSharedStateStack } from './harness.js';

/**
 * llm-token-limit and llm-emit-token-metric with two engine processes behind one Envoy, sharing one real Redis:
 * token counters hold across both engines as on one (estimates are counted atomically as calls arrive, usage as
 * answers complete), and each engine's token metrics appear on its /metrics and in the configured event stream.
 */
describe('language-model tokens through Redis, two engine processes', () => {
  let redis: RunningRedis;
  let backend: OpenAiBackend;
  let stack: SharedStateStack;

  const chat = (content: string) => ({ model: 'gpt-4o', messages: [{ role: 'user', content }] });
  const prompt = chat('Count the tokens of this prompt, please.');
  const promptTokens = estimatePromptTokens(prompt);

  beforeAll(async () => {
    redis = await startRedis();
    backend = await startOpenAiBackend({
      // The backend reports exactly the estimate (and no completion) for the `exact` API, 10 + 20 otherwise.
      usage: (request) =>
        request.url.startsWith('/exact')
          ? { promptTokens: estimatePromptTokens(request.json), completionTokens: 0 }
          : { promptTokens: 10, completionTokens: 20 },
    });
    const client =
      '@(context.Request.Headers.GetValueOrDefault(&quot;X-Client&quot;, &quot;anonymous&quot;))';
    stack = await startSharedStateStack(
      `
state:
  redis: { url: "${redis.url}", keyPrefix: "llm:" }
  metricsLogger: tokens
  loggers:
    tokens: { stream: token-metrics, maxLength: 1000 }
apis:
${apiYaml('exact', `${backend.url}/exact`, [['chat', 'POST', '/chat/completions', 'exact.xml']])}
${apiYaml('usage', backend.url, [['chat', 'POST', '/chat/completions', 'usage.xml']])}
`,
      {
        'exact.xml': policy({
          inbound: `<llm-token-limit counter-key="${client}" tokens-per-minute="${10 * promptTokens}" estimate-prompt-tokens="true" />`,
        }),
        'usage.xml': policy({
          inbound: `<llm-token-limit counter-key="${client}" tokens-per-minute="100" estimate-prompt-tokens="false"
              token-quota="1000" token-quota-period="Monthly" remaining-quota-tokens-header-name="X-Quota-Left" />
            <llm-emit-token-metric namespace="llm-gateway">
              <dimension name="API ID" />
              <dimension name="Client" value="${client}" />
            </llm-emit-token-metric>`,
        }),
      },
    );
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await backend?.close();
    await redis?.close();
  });

  const post = (path: string, body: unknown, client: string) =>
    fetch(`${stack.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Client': client },
      body: JSON.stringify(body),
    });

  it(`admits exactly 10 of 20 concurrent prompts that each fill a tenth of the limit, spread over both engines`, async () => {
    expect(promptTokens).toBeGreaterThan(5);
    const before = stack.engines.map((engine) => engine.requests());
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => post('/exact/chat/completions', prompt, 'burst')),
    );
    const statuses = await Promise.all(
      responses.map(async (r) => {
        await r.text();
        return r.status;
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    // Both engines took part.
    await until(
      () => stack.engines.every((engine, i) => engine.requests() > before[i]!),
      'both engines to log requests',
    );
  });

  it('counts the usage answered through either engine: 100 tokens a minute admit 4 answers of 30', async () => {
    const statuses: number[] = [];
    const quotaLeft: (string | null)[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await post('/usage/chat/completions', chat('hi'), 'steady');
      statuses.push(response.status);
      quotaLeft.push(response.headers.get('x-quota-left'));
      await response.text();
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    expect(quotaLeft.slice(0, 4)).toEqual(['1000', '970', '940', '910']);
  });

  it('emits prompt, completion and total tokens on each engine’s /metrics and to the metricsLogger’s event stream', async () => {
    for (let i = 0; i < 2; i++)
      await (await post('/usage/chat/completions', chat('hi'), `metered-${i}`)).text();
    const series = (text: string, name: string) =>
      text
        .split('\n')
        .filter(
          (line) => line.startsWith('portcullis_custom_metric_total{') && line.includes(`name="${name}"`),
        )
        .filter((line) => line.includes('namespace="llm-gateway"') && line.includes('api_id="usage"'))
        .filter((line) => line.includes('client="metered-'))
        .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
    const scrape = async () =>
      Promise.all(stack.engines.map(async (engine) => (await fetch(engine.metricsUrl)).text()));
    await until(async () => {
      const pages = await scrape();
      return pages.reduce((sum, page) => sum + series(page, 'Total Tokens'), 0) === 60;
    }, 'the total tokens of both calls on /metrics');
    const pages = await scrape();
    expect(pages.reduce((sum, page) => sum + series(page, 'Prompt Tokens'), 0)).toBe(20);
    expect(pages.reduce((sum, page) => sum + series(page, 'Completion Tokens'), 0)).toBe(40);
    // The same metrics, one JSON event each, in the Redis stream of the logger state.metricsLogger names.
    await until(
      () => redis.cli('XRANGE', 'llm:token-metrics', '-', '+').split('metered-').length - 1 >= 6,
      'six metric events in the stream',
    );
    const events = redis.cli('XRANGE', 'llm:token-metrics', '-', '+');
    expect(events).toContain('"name":"Total Tokens"');
    expect(events).toContain('"API ID":"usage"');
  });
});
