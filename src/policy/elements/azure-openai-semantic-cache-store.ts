import { defineElement } from '../element.js';
import { SEMANTIC_CACHE_STORE } from '../shared/semantic-cache.js';

/** Stores the response in the semantic cache (shared/semantic-cache.ts; both names behave alike). */
export const azureOpenAiSemanticCacheStore = defineElement({
  name: 'azure-openai-semantic-cache-store',
  ...SEMANTIC_CACHE_STORE,
});
