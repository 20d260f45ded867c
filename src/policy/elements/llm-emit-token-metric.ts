import { defineTokenMetric } from '../shared/token-metric.js';

/** Emits each language-model call's prompt, completion and total tokens as metrics. See shared/token-metric.ts. */
export const llmEmitTokenMetric = defineTokenMetric({
  name: 'llm-emit-token-metric',
  summary:
    'Emits the prompt, completion and total tokens of each language-model call as metrics with dimensions.',
});
