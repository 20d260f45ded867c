import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../../../src/policy/diagnostics.js';
import { PipelineRun } from '../../../../src/policy/runner.js';
import { countTextTokens, estimatePromptTokens } from '../../../../src/policy/shared/prompt-tokens.js';
import { quotaPeriodWindow } from '../../../../src/policy/shared/token-limit.js';
import { validatePolicies } from '../../../../src/policy/validate.js';
import { fakeServices, header, pipelineOf, policies, request } from '../../../doubles/policy-services.js';

const document = (statement: string) => `<policies>
  <inbound>
    <base />
    ${statement}
  </inbound>
</policies>`;

const errorsOf = (statement: string) =>
  validatePolicies([{ file: 'policies/llm.xml', text: document(statement) }]).map(formatDiagnostic);

describe('llm-token-limit', () => {
  it('says where and what is wrong with its attributes (file:line:col)', () => {
    expect(errorsOf('<llm-token-limit counter-key="k" />')).toEqual([
      'policies/llm.xml:4:5: policies/inbound/llm-token-limit[2]: llm-token-limit needs tokens-per-minute, or token-quota with token-quota-period, got neither',
    ]);
    expect(errorsOf('<azure-openai-token-limit counter-key="k" token-quota="10" />')).toEqual([
      'policies/llm.xml:4:5: policies/inbound/azure-openai-token-limit[2]: azure-openai-token-limit/@token-quota needs token-quota-period, got none',
    ]);
    expect(
      errorsOf('<llm-token-limit counter-key="k" tokens-per-minute="10" token-quota-period="Daily" />'),
    ).toEqual([
      'policies/llm.xml:4:5: policies/inbound/llm-token-limit[2]: llm-token-limit/@token-quota-period needs token-quota, got none',
    ]);
    const [period] = errorsOf(
      '<llm-token-limit counter-key="k" token-quota="5" token-quota-period="Fortnightly" />',
    );
    expect(period).toMatch(/^policies\/llm\.xml:4:\d+: .*token-quota-period.*Hourly.*"Fortnightly"/);
    const [minute] = errorsOf('<llm-token-limit counter-key="k" tokens-per-minute="lots" />');
    expect(minute).toMatch(/^policies\/llm\.xml:4:\d+: .*tokens-per-minute.*"lots"/);
    expect(errorsOf('<llm-token-limit tokens-per-minute="5" />')[0]).toMatch(
      /^policies\/llm\.xml:4:5: .*counter-key/,
    );
    expect(
      errorsOf(
        '<llm-token-limit counter-key="@(context.Request.IpAddress)" tokens-per-minute="@(5000)" token-quota="1" token-quota-period="Yearly" estimate-prompt-tokens="true" />',
      ),
    ).toEqual([]);
  });

  it('counts quotas in calendar periods (UTC): weeks from Monday, months and years as long as they are', () => {
    const at = Date.parse('2024-02-14T13:45:10Z'); // a Wednesday in a leap year
    expect(quotaPeriodWindow('Hourly', at)).toEqual({
      originMs: Date.parse('2024-02-14T13:00:00Z'),
      periodSeconds: 3600,
    });
    expect(quotaPeriodWindow('Daily', at)).toEqual({
      originMs: Date.parse('2024-02-14T00:00:00Z'),
      periodSeconds: 86_400,
    });
    expect(quotaPeriodWindow('Weekly', at)).toEqual({
      originMs: Date.parse('2024-02-12T00:00:00Z'),
      periodSeconds: 604_800,
    });
    expect(quotaPeriodWindow('Monthly', at)).toEqual({
      originMs: Date.parse('2024-02-01T00:00:00Z'),
      periodSeconds: 29 * 86_400,
    });
    expect(quotaPeriodWindow('Yearly', at)).toEqual({
      originMs: Date.parse('2024-01-01T00:00:00Z'),
      periodSeconds: 366 * 86_400,
    });
    expect(quotaPeriodWindow('Weekly', Date.parse('2024-02-18T23:59:59Z')).originMs).toBe(
      Date.parse('2024-02-12T00:00:00Z'),
    );
  });

  it('refuses an estimated prompt that does not fit before the backend, and counts the reported usage after', async () => {
    const services = fakeServices();
    const p = pipelineOf(
      policies({
        inbound:
          '<llm-token-limit counter-key="k" tokens-per-minute="50" estimate-prompt-tokens="true" tokens-consumed-variable-name="used" />',
      }),
    );
    const chat = (content: string) =>
      request({
        method: 'POST',
        body: Buffer.from(JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content }] })),
      });
    const long = new PipelineRun(p, chat('word '.repeat(60)), services);
    const refused = await long.onRequest();
    expect(refused.kind).toBe('respond');
    if (refused.kind !== 'respond') return;
    expect(refused.response.status).toBe(429);
    expect(header(refused.response, 'Retry-After')).toEqual(['60']);
    // A short prompt is counted as it arrives (about 10 tokens), then the answer's usage tops it up to 45.
    const short = new PipelineRun(p, chat('Hi'), services);
    expect((await short.onRequest()).kind).toBe('forward');
    const estimate = short.context.variables.get('used') as number;
    expect(estimate).toBeGreaterThan(5);
    await short.responseBodyChunk(
      Buffer.from('{"usage":{"prompt_tokens":15,"completion_tokens":30,"total_tokens":45}}'),
      true,
    );
    expect(short.context.variables.get('used')).toBe(45);
    await short.onResponse({ status: 200, headers: [] });
    const next = new PipelineRun(p, chat('Hi'), services);
    const outcome = await next.onRequest();
    // 45 used: another estimate of about 10 does not fit in 50.
    expect(outcome.kind).toBe('respond');
  });

  it('counts a JSON answer without usage as its prompt and its completion text, by the same tokenizer', async () => {
    const services = fakeServices();
    const p = pipelineOf(
      policies({
        inbound:
          '<llm-token-limit counter-key="k" tokens-per-minute="100000" tokens-consumed-variable-name="used" />',
      }),
    );
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Tell me a long story.' }] };
    const run = new PipelineRun(
      p,
      request({ method: 'POST', body: Buffer.from(JSON.stringify(body)) }),
      services,
    );
    expect((await run.onRequest()).kind).toBe('forward');
    const story = 'Once upon a time, a gateway counted tokens. '.repeat(50);
    const answer = JSON.stringify({
      choices: [{ index: 0, message: { role: 'assistant', content: story } }],
    });
    // Split inside the text: the answer is counted once it is complete.
    await run.responseBodyChunk(Buffer.from(answer.slice(0, 300)), false);
    await run.responseBodyChunk(Buffer.from(answer.slice(300)), true);
    expect(run.context.variables.get('used')).toBe(
      estimatePromptTokens(body) + countTextTokens(story, 'o200k_base'),
    );
  });
});
