/**
 * Token usage as language-model APIs report it, read from a response while it passes to the client: a JSON answer
 * (chat completions, completions, embeddings, responses, Anthropic messages) or a server-sent-event stream (chat
 * completions with `stream_options.include_usage`, the Responses API's `response.completed`, Anthropic's
 * `message_start` / `message_delta`), and Google's Gemini API as Vertex AI serves it natively (`usageMetadata`:
 * `generateContent`, and `streamGenerateContent` as an event stream or a JSON array of chunks, the last one carrying
 * the totals). The stream is scanned chunk by chunk with a bounded carry-over; nothing keeps the whole body.
 */

export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
}

/** What one JSON object reports; a field it does not name stays undefined (a stream reports in parts). */
interface PartialUsage {
  prompt?: number;
  completion?: number;
  total?: number;
}

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;

/** The `usage` object of an answer or event, wherever its API puts it. */
function usageObject(value: unknown): Record<string, unknown> | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  const direct = record.usage ?? record.usageMetadata;
  if (direct !== null && typeof direct === 'object') return direct as Record<string, unknown>;
  // The Responses API's `response.completed` (and Anthropic's `message_start`) nest the object that has it.
  for (const holder of ['response', 'message']) {
    const nested = record[holder];
    if (nested !== null && typeof nested === 'object') {
      const usage = (nested as Record<string, unknown>).usage;
      if (usage !== null && typeof usage === 'object') return usage as Record<string, unknown>;
    }
  }
  return undefined;
}

function partialUsage(value: unknown): PartialUsage | undefined {
  const usage = usageObject(value);
  if (usage === undefined) return undefined;
  const prompt = count(usage.prompt_tokens) ?? count(usage.input_tokens) ?? count(usage.promptTokenCount);
  const completion =
    count(usage.completion_tokens) ?? count(usage.output_tokens) ?? count(usage.candidatesTokenCount);
  const total = count(usage.total_tokens) ?? count(usage.totalTokenCount);
  if (prompt === undefined && completion === undefined && total === undefined) return undefined;
  return { prompt, completion, total };
}

/** Usage from a whole JSON answer, or undefined when it reports none. */
export function usageOfJson(value: unknown): TokenUsage | undefined {
  const partial = partialUsage(value);
  return partial === undefined ? undefined : complete(partial);
}

function complete(partial: PartialUsage): TokenUsage {
  const prompt = partial.prompt ?? 0;
  const completion = partial.completion ?? Math.max(0, (partial.total ?? prompt) - prompt);
  return {
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: partial.total ?? prompt + completion,
  };
}

/** One server-sent event: its `event` field (empty when unnamed) and its data lines joined by newlines. */
export interface ServerSentEvent {
  readonly event: string;
  readonly data: string;
}

/**
 * Splits a server-sent-event stream into events as bytes arrive, whatever the chunk boundaries (inside a line,
 * inside a multi-byte character, between `\r` and `\n`). Only the unfinished tail is carried between chunks, at
 * most `maxCarryBytes`: an event longer than that is skipped whole (reported through `onOverflow`), and scanning
 * resumes at the next one.
 */
export class SseScanner {
  /** The bytes after the last complete line. */
  #carry: Buffer = Buffer.alloc(0);
  #event = '';
  #data: string[] = [];
  #dataBytes = 0;
  /** Inside an event that outgrew the bound: skip lines until its blank line. */
  #skipping = false;
  /** While skipping: the bytes of an unfinished line were dropped, so its end is not a blank line. */
  #midLine = false;
  /** The previous chunk ended with `\r`: a `\n` starting this one belongs to that line end. */
  #afterCr = false;

  constructor(
    private readonly onEvent: (event: ServerSentEvent) => void,
    private readonly maxCarryBytes = 1 << 20,
    private readonly onOverflow: () => void = () => {},
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    if (this.#afterCr && chunk.length > 0 && chunk[0] === 0x0a) start = 1;
    this.#afterCr = false;
    let lineStart = start;
    for (let i = start; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte !== 0x0a && byte !== 0x0d) continue;
      this.#line(chunk, lineStart, i);
      if (byte === 0x0d) {
        if (i + 1 < chunk.length) {
          if (chunk[i + 1] === 0x0a) i++;
        } else this.#afterCr = true;
      }
      lineStart = i + 1;
    }
    if (lineStart < chunk.length) this.#keep(chunk.subarray(lineStart));
  }

  /** The stream ended: an event not closed by a blank line is still dispatched (as browsers do not, but harmless). */
  end(): void {
    if (this.#carry.length > 0) {
      const rest = this.#carry;
      this.#carry = Buffer.alloc(0);
      this.#processLine(rest.toString('utf8'));
    }
    this.#dispatch();
  }

  #keep(tail: Buffer): void {
    if (!this.#skipping && this.#carry.length + tail.length + this.#dataBytes > this.maxCarryBytes)
      this.#overflow();
    if (this.#skipping) {
      this.#midLine = true;
      return;
    }
    this.#carry = this.#carry.length === 0 ? Buffer.from(tail) : Buffer.concat([this.#carry, tail]);
  }

  #line(chunk: Buffer, from: number, to: number): void {
    let bytes = chunk.subarray(from, to);
    if (this.#carry.length > 0) {
      bytes = Buffer.concat([this.#carry, bytes]);
      this.#carry = Buffer.alloc(0);
    }
    if (this.#skipping) {
      if (bytes.length === 0 && !this.#midLine) this.#skipping = false;
      this.#midLine = false;
      return;
    }
    this.#processLine(bytes.toString('utf8'));
  }

  #processLine(line: string): void {
    if (line === '') {
      this.#dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.#dataBytes += value.length;
      if (this.#dataBytes > this.maxCarryBytes) {
        this.#overflow();
        return;
      }
      this.#data.push(value);
    } else if (field === 'event') this.#event = value;
  }

  #dispatch(): void {
    if (this.#data.length > 0) this.onEvent({ event: this.#event, data: this.#data.join('\n') });
    this.#reset();
  }

  #overflow(): void {
    this.#reset();
    this.#carry = Buffer.alloc(0);
    this.#skipping = true;
    this.onOverflow();
  }

  #reset(): void {
    this.#event = '';
    this.#data = [];
    this.#dataBytes = 0;
  }
}

/** One of these appears in the data of every event that can carry usage; the others are not parsed. */
const USAGE_MARKS = ['"usage"', '"usageMetadata"'] as const;

/**
 * Reads the usage of one response as its body passes, without keeping it: a stream is scanned event by event (only
 * events that mention `usage` are parsed), a JSON answer is kept up to `maxJsonBytes` and parsed at its end. Fields
 * reported by several events (Anthropic's input tokens first, output tokens last) are merged, the latest value of
 * each winning.
 */
export class UsageMeter {
  #kind: 'unknown' | 'json' | 'sse' = 'unknown';
  #json: Buffer[] = [];
  #jsonBytes = 0;
  #scanner: SseScanner | undefined;
  #partial: PartialUsage | undefined;
  #ended = false;
  #answer: unknown;

  constructor(private readonly maxJsonBytes = 4 << 20) {}

  /** Feeds the next piece of the body. */
  push(chunk: Buffer): void {
    if (this.#ended || chunk.length === 0) return;
    if (this.#kind === 'unknown') {
      const first = chunk.find((byte) => byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09);
      if (first === undefined) return;
      // A JSON answer opens with `{`; an event stream with a field name or a comment.
      this.#kind = first === 0x7b || first === 0x5b ? 'json' : 'sse';
      if (this.#kind === 'sse') this.#scanner = new SseScanner((event) => this.#onEvent(event));
    }
    if (this.#kind === 'sse') {
      this.#scanner!.push(chunk);
      return;
    }
    this.#jsonBytes += chunk.length;
    if (this.#jsonBytes > this.maxJsonBytes) {
      this.#json = [];
      return;
    }
    this.#json.push(chunk);
  }

  /** The body ended: returns the usage it reported, or undefined. */
  end(): TokenUsage | undefined {
    if (!this.#ended) {
      this.#ended = true;
      if (this.#kind === 'sse') this.#scanner!.end();
      else if (this.#kind === 'json' && this.#jsonBytes <= this.maxJsonBytes) {
        try {
          const answer: unknown = JSON.parse(Buffer.concat(this.#json).toString('utf8'));
          this.#answer = answer;
          // Gemini's streamGenerateContent without `alt=sse` answers a JSON array of chunks.
          for (const part of Array.isArray(answer) ? answer : [answer]) this.#merge(partialUsage(part));
        } catch {
          // Not JSON after all: no usage.
        }
        this.#json = [];
      }
    }
    return this.#partial === undefined ? undefined : complete(this.#partial);
  }

  /**
   * The JSON answer as parsed by end(), for estimating its completion when it reports no usage; undefined for a
   * stream, a body that is not JSON, or one larger than `maxJsonBytes`.
   */
  get answer(): unknown {
    return this.#answer;
  }

  #onEvent(event: ServerSentEvent): void {
    if (!USAGE_MARKS.some((mark) => event.data.includes(mark))) return;
    try {
      this.#merge(partialUsage(JSON.parse(event.data)));
    } catch {
      // An event that is not JSON carries no usage.
    }
  }

  #merge(found: PartialUsage | undefined): void {
    if (found === undefined) return;
    const merged: PartialUsage = { ...this.#partial };
    if (found.prompt !== undefined) merged.prompt = found.prompt;
    if (found.completion !== undefined) merged.completion = found.completion;
    if (found.total !== undefined) merged.total = found.total;
    this.#partial = merged;
  }
}
