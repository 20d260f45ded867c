/**
 * One language-model call as the AI gateway elements see it (llm-token-limit, llm-emit-token-metric and their
 * azure-openai-* names): the request body read once, its prompt tokens estimated once, and the token usage read once
 * from the response as it passes — however many elements of the pipeline ask for them.
 */
import type { ResponseBodyWatcher, RunContext } from '../runtime.js';
import { CompletionCounter, estimateCompletionTokens } from './completion-tokens.js';
import { type TokenUsage, UsageMeter } from './llm-usage.js';
import { type Encoding, encodingFor, estimatePromptTokens, isStreamRequest } from './prompt-tokens.js';

/**
 * What the call used, when the response is over: the usage the backend reported, or — when it reported none —
 * the prompt estimate and the completion text counted with the same tokenizer: a stream's as it passed, a JSON
 * answer's once complete (`estimated` says so).
 */
export interface CallUsage extends TokenUsage {
  readonly estimated: boolean;
}

/**
 * Told once per call, when its response is complete (a call that never gets its whole response is not told: what
 * was counted as it arrived stays counted).
 */
export type UsageListener = (usage: CallUsage, run: RunContext) => void | Promise<void>;

export class LlmCall {
  #request: unknown;
  #requestRead = false;
  #prompt: number | undefined;
  #listeners: UsageListener[] = [];
  #meter: UsageMeter | undefined;
  #completionText: CompletionCounter | undefined;
  #done = false;

  constructor(private readonly run: RunContext) {}

  /** The request body parsed as JSON (undefined when absent or not JSON). */
  get request(): unknown {
    if (!this.#requestRead) {
      this.#requestRead = true;
      const bytes = this.run.context.request.body?.bytes;
      try {
        this.#request = bytes && bytes.length > 0 ? JSON.parse(bytes.toString('utf8')) : undefined;
      } catch {
        this.#request = undefined;
      }
    }
    return this.#request;
  }

  get streamed(): boolean {
    return isStreamRequest(this.request);
  }

  /** The tokenizer of the request's model, for the prompt and the completion alike. */
  get encoding(): Encoding {
    const model = (this.request as { model?: unknown } | undefined)?.model;
    return encodingFor(typeof model === 'string' ? model : undefined);
  }

  /** The prompt's tokens by the model's tokenizer. */
  promptTokens(): number {
    this.#prompt ??= estimatePromptTokens(this.request);
    return this.#prompt;
  }

  /** Calls `listener` once the response's usage is known. */
  onUsage(listener: UsageListener): void {
    this.#listeners.push(listener);
    if (this.#meter !== undefined) return;
    const meter = new UsageMeter();
    this.#meter = meter;
    const request = this.request as { stream_options?: { include_usage?: unknown } } | undefined;
    // A chat/completions stream reports usage only when asked to: count its text instead.
    if (this.streamed && request?.stream_options?.include_usage !== true)
      this.#completionText = new CompletionCounter(this.encoding);
    const watcher: ResponseBodyWatcher = {
      chunk: (bytes, last) => {
        meter.push(bytes);
        this.#completionText?.push(bytes);
        if (!last) return;
        return this.#finish(meter.end());
      },
    };
    this.run.responseWatchers.push(watcher);
  }

  async #finish(reported: TokenUsage | undefined): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    let usage: CallUsage;
    if (reported !== undefined) usage = { ...reported, estimated: false };
    else {
      const prompt = this.promptTokens();
      const completion =
        this.#completionText?.end() ?? estimateCompletionTokens(this.#meter?.answer, this.encoding);
      usage = {
        promptTokens: prompt,
        completionTokens: completion,
        totalTokens: prompt + completion,
        estimated: true,
      };
    }
    for (const listener of this.#listeners) await listener(usage, this.run);
  }
}

const calls = new WeakMap<RunContext, LlmCall>();

/** The language-model call of this request (one per request, shared by every element that asks). */
export function llmCall(run: RunContext): LlmCall {
  let call = calls.get(run);
  if (call === undefined) {
    call = new LlmCall(run);
    calls.set(run, call);
  }
  return call;
}
