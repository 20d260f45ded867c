import { defineTokenMetric } from '../shared/token-metric.js';

/** API Management's older name of llm-emit-token-metric: the same policy (see shared/token-metric.ts). */
export const azureOpenAiEmitTokenMetric = defineTokenMetric({
  name: 'azure-openai-emit-token-metric',
  summary:
    'Emits the prompt, completion and total tokens of each OpenAI call as metrics; same as llm-emit-token-metric.',
});
