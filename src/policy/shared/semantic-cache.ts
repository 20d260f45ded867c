/**
 * llm-semantic-cache-lookup / -store and their azure-openai-… names (API Management accepts both; they behave
 * alike). The lookup embeds the request's prompt through the named embeddings backend (an OpenAI-compatible
 * `/embeddings`) and serves the response stored under the nearest prompt of the same partition when its distance
 * is within score-threshold; otherwise it leaves the partition and the embedding for the store in outbound.
 *
 * score-threshold is a distance, as API Management documents it ("0.0 to 1.0; lower values require higher
 * semantic similarity"): the cosine distance, 1 − cosine similarity, must be ≤ the threshold. A cache that
 * cannot answer (embeddings backend down, state unavailable) is a miss and the request goes on, as documented.
 */
import type { CompileContext } from '../element.js';
import type { PolicyNode } from '../node.js';
import type { RunContext, Statement } from '../runtime.js';
import { bool, EMPTY, elements, GPAO, int, num, oneOf, str, text } from '../schema.js';
import { BackendCallError, postToBackend, withPathSuffix } from './ai-backend-call.js';
import { jsonBody, type PromptMessage, promptMessages, SYSTEM_ROLES } from './prompt-messages.js';
import { servedResponse, storedResponse } from './stored-response.js';

/** How long the embeddings call may take: every cacheable request waits for it. */
export const EMBEDDINGS_TIMEOUT_MS = 5000;

/** What a lookup compares: the prompt's messages, optionally without the system ones, as one text. */
export function promptText(
  messages: readonly PromptMessage[],
  options: { readonly ignoreSystemMessages: boolean; readonly maxMessageCount: number | undefined },
): string | undefined {
  const compared = options.ignoreSystemMessages
    ? messages.filter((m) => !SYSTEM_ROLES.has(m.role))
    : messages;
  // max-message-count: a conversation longer than this is not cached (its answer depends on too much history).
  if (options.maxMessageCount !== undefined && compared.length > options.maxMessageCount) return undefined;
  const text = compared
    .map((m) => m.text)
    .filter((t) => t !== '')
    .join('\n');
  return text === '' ? undefined : text;
}

/** The first embedding of an OpenAI-compatible `/embeddings` answer (`data[0].embedding`). */
export function embeddingOf(answer: unknown): number[] {
  const first = (answer as { data?: { embedding?: unknown }[] } | null)?.data?.[0]?.embedding;
  if (
    !Array.isArray(first) ||
    first.length === 0 ||
    !first.every((x) => typeof x === 'number' && Number.isFinite(x))
  )
    throw new BackendCallError('the embeddings answer has no data[0].embedding array of numbers');
  return first;
}

/**
 * The embeddings request: `input`, and `model` when the backend's URL names one in its `model` query parameter
 * (OpenAI and most compatible servers need it in the body; Azure OpenAI names the deployment in the path).
 */
function embeddingsRequest(run: RunContext, backendId: string, input: string) {
  const backend = run.services.backends.get(backendId);
  const model = backend === undefined ? null : new URL(backend.url).searchParams.get('model');
  return postToBackend(
    run,
    backendId,
    (base) => withPathSuffix(base, '/embeddings'),
    model === null ? { input } : { input, model },
    EMBEDDINGS_TIMEOUT_MS,
  );
}

const LOOKUP_ATTRIBUTES = {
  'score-threshold': num({ required: true, min: 0, max: 1 }),
  'embeddings-backend-id': str({ required: true }),
  // API Management requires "system-assigned" (its managed identity); here the call carries the request's
  // credentials (see ai-backend-call.ts), so the attribute is accepted and changes nothing.
  'embeddings-backend-auth': oneOf(['system-assigned'], { expression: false }),
  'ignore-system-messages': bool({ default: false }),
  'max-message-count': int({ min: 1 }),
} as const;
const LOOKUP_CONTENT = elements({ name: 'vary-by', content: text(true, true) });

/** Everything of llm-semantic-cache-lookup but its name (the element files add theirs). */
export const SEMANTIC_CACHE_LOOKUP = {
  summary: 'Serves the cached response of the nearest earlier prompt (embeddings, cosine distance).',
  sections: ['inbound'],
  scopes: GPAO,
  attributes: LOOKUP_ATTRIBUTES,
  content: LOOKUP_CONTENT,
  body: 'read',
  touchesResponse: true,
  oncePerSection: true,
  compile(node: PolicyNode<typeof LOOKUP_ATTRIBUTES, typeof LOOKUP_CONTENT>, _c: CompileContext): Statement {
    const element = node.name;
    const threshold = node.getter('score-threshold');
    const backendId = node.getter('embeddings-backend-id');
    const ignoreSystem = node.getter('ignore-system-messages');
    const maxMessages = node.getter('max-message-count');
    const varyBy = node.childrenNamed('vary-by').map((v) => v.text());
    return async (run) => {
      run.semanticCacheEntry = undefined;
      const request = run.context.request;
      const body = jsonBody(request.body?.bytes);
      // A streamed answer is not stored, so there is nothing to look up for a streamed request either.
      if ((body as { stream?: unknown } | undefined)?.stream === true) return 'next';
      const messages = promptMessages(body);
      if (messages === undefined) return 'next';
      const prompt = promptText(messages, {
        ignoreSystemMessages: ignoreSystem(run),
        maxMessageCount: maxMessages?.(run),
      });
      if (prompt === undefined) return 'next';
      const ctx = run.context;
      const partition = [
        `api=${ctx.api.id}`,
        `op=${ctx.operation.id}`,
        // The path names the deployment on Azure OpenAI, the body the model elsewhere: answers of one model only.
        `path=${request.url.path}`,
        `model=${JSON.stringify((body as { model?: unknown }).model ?? null)}`,
        ...varyBy.map((v) => `vary=${v(run)}`),
      ].join('\n');
      let embedding: number[];
      try {
        embedding = embeddingOf(await embeddingsRequest(run, backendId(run), prompt));
      } catch (error) {
        run.services.counters.count(element, 'failed', 'EmbeddingsUnavailable');
        run.services.logger.warn('semantic cache: no embedding, the request is not cached', {
          requestId: ctx.requestId.value,
          error: error instanceof Error ? error.message : String(error),
        });
        return 'next';
      }
      const hit = await run.services.semanticCache.lookup(partition, embedding, threshold(run));
      if (hit === undefined) {
        run.semanticCacheEntry = { partition, embedding };
        return 'next';
      }
      run.context.response = servedResponse(hit.response);
      run.servedFromCache = true;
      return 'respond';
    };
  },
} as const;

const STORE_ATTRIBUTES = { duration: int({ required: true, min: 0 }), 'cache-response': bool() } as const;

/** Everything of llm-semantic-cache-store but its name. */
export const SEMANTIC_CACHE_STORE = {
  summary: 'Stores the response under the prompt embedding the semantic cache lookup missed with.',
  sections: ['outbound'],
  scopes: GPAO,
  attributes: STORE_ATTRIBUTES,
  content: EMPTY,
  body: 'read',
  oncePerSection: true,
  compile(node: PolicyNode<typeof STORE_ATTRIBUTES, typeof EMPTY>, _c: CompileContext): Statement {
    const duration = node.getter('duration');
    const cacheResponse = node.getter('cache-response');
    return async (run): Promise<'next'> => {
      const entry = run.semanticCacheEntry;
      const response = run.context.response;
      if (entry === undefined || response === null) return 'next';
      // Only 200 unless cache-response says otherwise, as API Management documents.
      if (cacheResponse?.(run) !== true && response.statusCode !== 200) return 'next';
      if ((response.headers.getJoined('Content-Type') ?? '').includes('text/event-stream')) return 'next';
      const seconds = duration(run);
      if (seconds <= 0) return 'next';
      await run.services.semanticCache.store(
        entry.partition,
        entry.embedding,
        storedResponse(response),
        seconds,
      );
      return 'next';
    };
  },
} as const;
