import { defineElement } from '../element.js';
import { SEMANTIC_CACHE_LOOKUP } from '../shared/semantic-cache.js';

/** Looks the prompt up in the semantic cache (shared/semantic-cache.ts; both names behave alike). */
export const azureOpenAiSemanticCacheLookup = defineElement({
  name: 'azure-openai-semantic-cache-lookup',
  ...SEMANTIC_CACHE_LOOKUP,
});
