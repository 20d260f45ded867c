import { describe, expect, it } from 'vitest';
import type { HttpRequest } from '../../../../src/policy/services.js';
import { fakeServices, inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

/** A fake Content Safety service whose answers the test gives per operation (analyze, shieldPrompt). */
function services(answers: { analyze?: unknown; shieldPrompt?: unknown; status?: number }) {
  const calls: HttpRequest[] = [];
  return Object.assign(fakeServices({ safety: 'https://cs.test' }), {
    calls,
    async fetch(call: HttpRequest) {
      calls.push(call);
      const operation = /text:(\w+)/.exec(call.url)?.[1] as 'analyze' | 'shieldPrompt';
      return {
        status: answers.status ?? 200,
        reason: '',
        headers: [],
        body: Buffer.from(JSON.stringify(answers[operation] ?? {})),
      };
    },
  });
}

const prompt = (text: string) =>
  ({
    method: 'POST',
    url: 'https://gw.example.com/chat/completions',
    body: Buffer.from(
      JSON.stringify({
        messages: [
          { role: 'system', content: 'Be kind.' },
          { role: 'user', content: [{ type: 'text', text }] },
        ],
      }),
    ),
  }) as const;

const POLICY = `<llm-content-safety backend-id="safety" shield-prompt="true">
  <categories output-type="EightSeverityLevels">
    <category name="Hate" threshold="4" />
    <category name="Violence" threshold="4" />
  </categories>
  <blocklists><id>blocklist1</id></blocklists>
</llm-content-safety>`;

describe('llm-content-safety', () => {
  it('sends the whole prompt to text:analyze and text:shieldPrompt and lets a clean one through', async () => {
    const s = services({
      analyze: { blocklistsMatch: [], categoriesAnalysis: [{ category: 'Hate', severity: 3 }] },
      shieldPrompt: { userPromptAnalysis: { attackDetected: false }, documentsAnalysis: [] },
    });
    const { outcome } = await inbound(POLICY, prompt('Hello there'), s);
    expect(outcome.kind).toBe('forward');
    const urls = s.calls.map((c) => c.url).sort();
    expect(urls).toEqual([
      'https://cs.test/contentsafety/text:analyze?api-version=2024-09-01',
      'https://cs.test/contentsafety/text:shieldPrompt?api-version=2024-09-01',
    ]);
    const analyze = JSON.parse(s.calls.find((c) => c.url.includes('analyze'))!.body!.toString());
    expect(analyze).toEqual({
      text: 'Be kind.\nHello there',
      categories: ['Hate', 'Violence'],
      blocklistNames: ['blocklist1'],
      haltOnBlocklistHit: true,
      outputType: 'EightSeverityLevels',
    });
  });

  it.each([
    [
      'a category at its threshold',
      { analyze: { categoriesAnalysis: [{ category: 'Violence', severity: 4 }] } },
      'ContentSafetyCategory',
    ],
    [
      'a blocklist hit',
      { analyze: { blocklistsMatch: [{ blocklistName: 'blocklist1' }] } },
      'ContentSafetyBlocklist',
    ],
    [
      'a prompt attack',
      { shieldPrompt: { userPromptAnalysis: { attackDetected: true } } },
      'ContentSafetyPromptAttack',
    ],
    ['an error from the service', { status: 401 }, 'ContentSafetyCheckFailed'],
  ])('refuses %s with 403 and API Management body', async (_name, answers, reason) => {
    const { outcome, context } = await inbound(POLICY, prompt('text'), services(answers));
    expect(outcome.kind).toBe('respond');
    if (outcome.kind !== 'respond') return;
    expect(outcome.response.status).toBe(403);
    expect(JSON.parse(outcome.response.body!.toString())).toEqual({
      statusCode: 403,
      message: 'Request failed content safety check.',
    });
    expect(context.lastError?.reason).toBe(reason);
  });

  it('does not refuse a category that is not configured', async () => {
    const s = services({ analyze: { categoriesAnalysis: [{ category: 'Sexual', severity: 7 }] } });
    const { outcome } = await inbound(POLICY, prompt('text'), s);
    expect(outcome.kind).toBe('forward');
  });

  it('answers 500 when the service cannot be reached or the prompt is over its character limit', async () => {
    const down = Object.assign(fakeServices({ safety: 'https://cs.test' }), {
      async fetch(): Promise<never> {
        throw new Error('connect ECONNREFUSED');
      },
    });
    const unreachable = await inbound(POLICY, prompt('text'), down);
    expect(unreachable.outcome.kind === 'respond' && unreachable.outcome.response.status).toBe(500);
    const long = await inbound(POLICY, prompt('x'.repeat(10_001)), services({}));
    expect(long.outcome.kind === 'respond' && long.outcome.response.status).toBe(500);
    expect(long.context.lastError?.reason).toBe('ContentSafetyTextTooLong');
  });

  it('rejects what the documentation does not allow, and enforce-on-completions (not implemented)', () => {
    expect(
      diagnosticsOf(
        '<llm-content-safety backend-id="cs"><categories><category name="Hate" threshold="8" /></categories></llm-content-safety>',
      ),
    ).toEqual([
      'policies/inbound/llm-content-safety[1]/categories[1]/category[1]: category/@threshold must be at most 7, got "8"',
    ]);
    expect(
      diagnosticsOf(
        '<llm-content-safety backend-id="cs"><categories output-type="Four"><category name="Hat" threshold="2" /></categories></llm-content-safety>',
      ),
    ).toEqual([
      'policies/inbound/llm-content-safety[1]/categories[1]: categories/@output-type must be one of FourSeverityLevels, EightSeverityLevels, got "Four"',
      'policies/inbound/llm-content-safety[1]/categories[1]/category[1]: category/@name must be one of Hate, SelfHarm, Sexual, Violence, got "Hat"',
    ]);
    expect(diagnosticsOf('<llm-content-safety shield-prompt="true" />')[0]).toMatch(/backend-id/);
    expect(diagnosticsOf('<llm-content-safety backend-id="cs" enforce-on-completions="true" />')).toEqual([
      'policies/inbound/llm-content-safety[1]: "llm-content-safety/@enforce-on-completions" is not implemented yet (completions are not screened)',
    ]);
  });
});
