import { describe, expect, it } from 'vitest';
import { promptMessages } from '../../../../src/policy/shared/prompt-messages.js';
import { countTextTokens, estimatePromptTokens } from '../../../../src/policy/shared/prompt-tokens.js';

/** The prompt of a request in Gemini's native shape (Vertex AI generateContent), read as OpenAI's chat messages are. */
const gemini = {
  systemInstruction: { parts: [{ text: 'Answer in French.' }] },
  contents: [
    { role: 'user', parts: [{ text: 'Hello' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
    { role: 'model', parts: [{ text: 'Bonjour' }] },
    { parts: [{ text: 'How are you?' }] },
  ],
};

describe('a Gemini request (Vertex AI native API)', () => {
  it('gives its system instruction and contents as messages, text parts only, role user when none is named', () => {
    expect(promptMessages(gemini)).toEqual([
      { role: 'system', text: 'Answer in French.' },
      { role: 'user', text: 'Hello' },
      { role: 'model', text: 'Bonjour' },
      { role: 'user', text: 'How are you?' },
    ]);
  });

  it('is estimated from the same texts as the messages give, and an empty request as nothing', () => {
    const texts = ['Answer in French.', 'Hello', 'Bonjour', 'How are you?'];
    const expected = texts.reduce((sum, text) => sum + countTextTokens(text, 'o200k_base'), 0);
    expect(estimatePromptTokens(gemini)).toBe(expected);
    expect(estimatePromptTokens({ contents: [] })).toBe(0);
  });
});
