import { defineTokenLimit } from '../shared/token-limit.js';

/** Limits language-model tokens per key: per minute (429) and/or a quota per period (403). See shared/token-limit.ts. */
export const llmTokenLimit = defineTokenLimit({
  name: 'llm-token-limit',
  summary: 'Limits language-model tokens per key per minute (429) and/or per quota period (403).',
});
