import { describe, expect, it } from 'vitest';
import { estimateCompletionTokens } from '../../../../src/policy/shared/completion-tokens.js';
import { countTextTokens } from '../../../../src/policy/shared/prompt-tokens.js';

const text = 'The quick brown fox jumps over the lazy dog, again and again. '.repeat(20);
const tokens = countTextTokens(text, 'o200k_base');
const args = '{"city":"Paris","unit":"celsius"}';

/** An answer without `usage` counts the text the model produced, by the prompt's tokenizer. */
describe('estimateCompletionTokens', () => {
  it.each([
    ['chat completions', { choices: [{ message: { role: 'assistant', content: text } }] }],
    ['chat completions, content parts', { choices: [{ message: { content: [{ type: 'text', text }] } }] }],
    ['completions', { object: 'text_completion', choices: [{ text }] }],
    [
      'Responses API',
      { object: 'response', output: [{ type: 'message', content: [{ type: 'output_text', text }] }] },
    ],
    ['Anthropic Messages', { type: 'message', role: 'assistant', content: [{ type: 'text', text }] }],
    ['Gemini', { candidates: [{ content: { role: 'model', parts: [{ text }] } }] }],
    [
      'Gemini, a JSON array of chunks',
      [text.slice(0, 100), text.slice(100)].map((t) => ({
        candidates: [{ content: { parts: [{ text: t }] } }],
      })),
    ],
  ])('%s: the tokens of its text', (_api, answer) => {
    const counted = estimateCompletionTokens(answer, 'o200k_base');
    // The chunked answer splits a word at most once.
    expect(Math.abs(counted - tokens)).toBeLessThanOrEqual(1);
    expect(tokens).toBeGreaterThan(200);
  });

  it('counts tool-call arguments as generated text', () => {
    const argsTokens = countTextTokens(args, 'o200k_base');
    expect(
      estimateCompletionTokens(
        { choices: [{ message: { tool_calls: [{ function: { name: 'weather', arguments: args } }] } }] },
        'o200k_base',
      ),
    ).toBe(argsTokens);
    expect(
      estimateCompletionTokens(
        { type: 'message', content: [{ type: 'tool_use', input: JSON.parse(args) }] },
        'o200k_base',
      ),
    ).toBe(argsTokens);
  });

  it('uses the tokenizer it is given', () => {
    const answer = { choices: [{ message: { content: text } }] };
    expect(estimateCompletionTokens(answer, 'cl100k_base')).toBe(countTextTokens(text, 'cl100k_base'));
  });

  it.each([
    ['embeddings', { object: 'list', data: [{ embedding: [0.1, 0.2] }] }],
    ['not an object', 'hello'],
    ['nothing', undefined],
  ])('%s: 0', (_what, answer) => {
    expect(estimateCompletionTokens(answer, 'o200k_base')).toBe(0);
  });
});
