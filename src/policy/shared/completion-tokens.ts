/**
 * Estimates the completion tokens of a language-model answer that reports no `usage`, with the tokenizer the prompt
 * is estimated with (prompt-tokens.ts): the text the model produced, from a JSON answer once it is complete, or
 * from a stream's deltas as they pass. Without it, such an answer would count as its prompt alone, however long.
 */
import { SseScanner } from './llm-usage.js';
import { contentTexts, countTextTokens, type Encoding } from './prompt-tokens.js';

type Json = Record<string, unknown>;

const record = (value: unknown): Json | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** Tool-call arguments are generated text too: a string as OpenAI sends them, an object (Anthropic, Gemini) as JSON. */
function argumentsText(value: unknown, into: string[]): void {
  if (typeof value === 'string') into.push(value);
  else if (value !== undefined && value !== null) into.push(JSON.stringify(value));
}

/** The texts one answer object produced, whichever API it comes from. */
function answerTexts(answer: Json, into: string[]): void {
  // Chat completions (`message`) and completions (`text`).
  for (const choice of list(answer.choices)) {
    const entry = record(choice);
    if (entry === undefined) continue;
    if (typeof entry.text === 'string') into.push(entry.text);
    const message = record(entry.message);
    if (message === undefined) continue;
    contentTexts(message.content, into);
    if (typeof message.refusal === 'string') into.push(message.refusal);
    for (const call of list(message.tool_calls))
      argumentsText(record(record(call)?.function)?.arguments, into);
  }
  // Responses API: message items (`output_text` parts), function calls, reasoning summaries.
  for (const item of list(answer.output)) {
    const entry = record(item);
    if (entry === undefined) continue;
    contentTexts(entry.content, into);
    contentTexts(entry.summary, into);
    argumentsText(entry.arguments, into);
  }
  // Anthropic Messages: `text` blocks and `tool_use` inputs.
  if (answer.type === 'message') {
    for (const block of list(answer.content)) {
      const entry = record(block);
      if (typeof entry?.text === 'string') into.push(entry.text);
      if (entry?.type === 'tool_use') argumentsText(entry.input, into);
    }
  }
  // Gemini: candidates' parts (text, function calls).
  for (const candidate of list(answer.candidates)) {
    for (const part of list(record(record(candidate)?.content)?.parts)) {
      const entry = record(part);
      if (typeof entry?.text === 'string') into.push(entry.text);
      argumentsText(record(entry?.functionCall)?.args, into);
    }
  }
}

/**
 * The completion tokens of a whole JSON answer (or of Gemini's JSON array of chunks); 0 for one that produced no
 * text this knows (embeddings).
 */
export function estimateCompletionTokens(answer: unknown, encoding: Encoding): number {
  const texts: string[] = [];
  for (const part of Array.isArray(answer) ? answer : [answer]) {
    const object = record(part);
    if (object !== undefined) answerTexts(object, texts);
  }
  let tokens = 0;
  for (const text of texts) tokens += countTextTokens(text, encoding);
  return tokens;
}

/** Counts the completion text of a chat/completions or Responses stream (when it reports no usage). */
export class CompletionCounter {
  #tokens = 0;
  readonly #scanner: SseScanner;

  constructor(private readonly encoding: Encoding) {
    // Only streams that report no usage pay for parsing every event.
    this.#scanner = new SseScanner((event) => this.#event(event.data));
  }

  push(bytes: Buffer): void {
    this.#scanner.push(bytes);
  }

  end(): number {
    this.#scanner.end();
    return this.#tokens;
  }

  #event(data: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return;
    }
    if (parsed === null || typeof parsed !== 'object') return;
    const event = parsed as { choices?: unknown; delta?: unknown };
    if (typeof event.delta === 'string') this.#tokens += countTextTokens(event.delta, this.encoding);
    if (!Array.isArray(event.choices)) return;
    for (const choice of event.choices as { delta?: { content?: unknown }; text?: unknown }[]) {
      const text = typeof choice?.delta?.content === 'string' ? choice.delta.content : choice?.text;
      if (typeof text === 'string') this.#tokens += countTextTokens(text, this.encoding);
    }
  }
}
