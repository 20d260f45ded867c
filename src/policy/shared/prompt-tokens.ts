/**
 * Estimates the prompt tokens of a language-model request before it is sent, as API Management does for
 * `estimate-prompt-tokens` (and always for streamed requests): the text of chat messages (`messages`), a completion
 * prompt (`prompt`), a Responses or embeddings `input`, Gemini's `contents` and `systemInstruction` (Vertex AI's
 * native API; its tokenizer is not public, so the same encodings stand in for it), counted with the model family's tokenizer — o200k_base for
 * the GPT-4o generation and later, cl100k_base otherwise. Both encodings ship with gpt-tokenizer: nothing is
 * downloaded at run time.
 */
import { createRequire } from 'node:module';

/** Special-token text in a prompt is counted as text, never refused. */
const asText = { disallowedSpecial: new Set<string>() };

/** The models that use o200k_base (OpenAI's own list: gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1/o3/o4 …). */
const o200kModel = /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o|gpt-oss)/i;

export type Encoding = 'o200k_base' | 'cl100k_base';

export function encodingFor(model: string | undefined): Encoding {
  // Unknown or missing model names get the newer encoding (what current OpenAI-compatible models use).
  if (model === undefined || model === '') return 'o200k_base';
  return o200kModel.test(model) || !/^(gpt-4|gpt-3|text-|davinci|babbage|curie|ada)/i.test(model)
    ? 'o200k_base'
    : 'cl100k_base';
}

type CountTokens = (text: string, options: typeof asText) => number;

const require = createRequire(import.meta.url);
const counters = new Map<Encoding, CountTokens>();

/**
 * An encoding's counter, loaded on first use: each is megabytes of rank tables (0.3–0.5 s to compile and build), which
 * every process that imports the policy elements — `validate`, `run`, an engine without AI APIs — would otherwise pay
 * at start. Loaded synchronously because counting is synchronous; `preloadTokenizers` moves the cost off the first
 * request.
 */
function counterFor(encoding: Encoding): CountTokens {
  let count = counters.get(encoding);
  if (count === undefined) {
    count = (require(`gpt-tokenizer/encoding/${encoding}`) as { countTokens: CountTokens }).countTokens;
    counters.set(encoding, count);
  }
  return count;
}

let preloading = false;

/**
 * Loads both encodings soon, once: the elements that count tokens call it when they compile, so an engine that
 * serves them has the tables before its first language-model request. The timer does not keep a process alive, so a
 * command that only compiles (`validate`) exits without loading them.
 */
export function preloadTokenizers(): void {
  if (preloading) return;
  preloading = true;
  setTimeout(() => {
    counterFor('o200k_base');
    counterFor('cl100k_base');
  }, 0).unref();
}

export function countTextTokens(text: string, encoding: Encoding): number {
  if (text === '') return 0;
  return counterFor(encoding)(text, asText);
}

/** OpenAI's accounting for chat formatting: a few tokens per message, and the assistant's reply primer. */
const TOKENS_PER_MESSAGE = 3;
const REPLY_PRIMER = 3;

/** The texts of a content value: a string, or an array of parts (`{type: "text", text}`, `input_text` …). */
export function contentTexts(content: unknown, into: string[]): void {
  if (typeof content === 'string') into.push(content);
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (typeof part === 'string') into.push(part);
      else if (part !== null && typeof part === 'object') {
        const text = (part as Record<string, unknown>).text;
        if (typeof text === 'string') into.push(text);
        // A Responses API input item may itself be a message with content.
        const inner = (part as Record<string, unknown>).content;
        if (inner !== undefined) contentTexts(inner, into);
      }
    }
  }
}

/** Gemini's `systemInstruction` and `contents` (each `{ role, parts: [{ text }] }`), in order. */
export function geminiContents(body: Record<string, unknown>): { role: string; parts: unknown }[] {
  const found: { role: string; parts: unknown }[] = [];
  const system = body.systemInstruction;
  if (system !== null && typeof system === 'object')
    found.push({ role: 'system', parts: (system as Record<string, unknown>).parts });
  if (Array.isArray(body.contents)) {
    for (const content of body.contents) {
      if (content === null || typeof content !== 'object') continue;
      const record = content as Record<string, unknown>;
      found.push({ role: typeof record.role === 'string' ? record.role : 'user', parts: record.parts });
    }
  }
  return found;
}

/** Whether a request body asks for a streamed answer (`"stream": true`). */
export function isStreamRequest(request: unknown): boolean {
  return request !== null && typeof request === 'object' && (request as { stream?: unknown }).stream === true;
}

/**
 * The estimated prompt tokens of a request body already parsed as JSON; 0 for a body that has no prompt this knows.
 */
export function estimatePromptTokens(request: unknown): number {
  if (request === null || typeof request !== 'object' || Array.isArray(request)) return 0;
  const body = request as Record<string, unknown>;
  const encoding = encodingFor(typeof body.model === 'string' ? body.model : undefined);
  let tokens = 0;
  const texts: string[] = [];
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) {
      if (message === null || typeof message !== 'object') continue;
      const record = message as Record<string, unknown>;
      tokens += TOKENS_PER_MESSAGE;
      if (typeof record.role === 'string') texts.push(record.role);
      if (typeof record.name === 'string') texts.push(record.name);
      contentTexts(record.content, texts);
    }
    tokens += REPLY_PRIMER;
  }
  // Anthropic Messages and Responses `instructions` / `system` are prompt text too.
  contentTexts(body.system, texts);
  if (typeof body.instructions === 'string') texts.push(body.instructions);
  contentTexts(body.prompt, texts);
  contentTexts(body.input, texts);
  for (const content of geminiContents(body)) contentTexts(content.parts, texts);
  for (const text of texts) tokens += countTextTokens(text, encoding);
  return tokens;
}
