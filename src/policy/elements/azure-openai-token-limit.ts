import { defineTokenLimit } from '../shared/token-limit.js';

/** API Management's older name of llm-token-limit: the same policy (see shared/token-limit.ts). */
export const azureOpenAiTokenLimit = defineTokenLimit({
  name: 'azure-openai-token-limit',
  summary:
    'Limits OpenAI tokens per key per minute (429) and/or per quota period (403); same as llm-token-limit.',
});
