/**
 * An OpenAI-compatible language-model backend for tests: a real HTTP server on a free loopback port that answers
 * `…/chat/completions`, `…/completions`, `…/responses` and `…/embeddings` (any path prefix: `/v1/…`,
 * `/openai/deployments/<name>/…`), as JSON or, when the request says `"stream": true`, as server-sent events.
 *
 * - Usage: each answer reports `usage` as the API does (chat/completions: prompt/completion/total tokens; responses:
 *   input/output/total; embeddings: prompt/total). Streamed chat completions carry it only when the request asks
 *   with `stream_options.include_usage` (a last chunk with empty `choices`); a streamed Responses answer carries it in
 *   its `response.completed` event. `configure({ usage: null })` answers without any usage.
 * - Holding a stream: `holdNextStream()` makes the next streamed answer stop after its first chunk until the gate is
 *   released, so a test can show the gateway passes chunks on as they come (the client reads the first chunk while
 *   the backend has not produced the last).
 * - Every request is recorded (`received`), so a test can show a refused request never reached the backend.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type LlmEndpoint = 'chat/completions' | 'completions' | 'responses' | 'embeddings';

export interface LlmRequest {
  readonly method: string;
  readonly url: string;
  readonly endpoint: LlmEndpoint | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly json: Record<string, unknown> | undefined;
}

/** The tokens an answer reports. */
export interface MockUsage {
  readonly promptTokens: number;
  /** Ignored for embeddings (they have no completion). */
  readonly completionTokens: number;
}

export interface OpenAiBackendOptions {
  /** What each answer reports as usage; null: no `usage` at all. A function decides per request. */
  readonly usage?: MockUsage | null | ((request: LlmRequest) => MockUsage | null);
  /** The completion text, one piece per streamed chunk (joined for a JSON answer). */
  readonly pieces?: readonly string[];
  /** Embedding vectors per input (default: mockEmbedding). */
  readonly embed?: (input: string) => number[];
}

/** Holds a streamed answer after its first chunk. */
export interface StreamGate {
  /** Resolves once the first chunk has been written to the socket. */
  readonly firstChunkWritten: Promise<void>;
  /** Lets the rest of the stream go. */
  release(): void;
}

export interface OpenAiBackend {
  readonly url: string;
  readonly port: number;
  /** Every request received, oldest first. */
  readonly received: LlmRequest[];
  /** Replaces some of the options for the answers from now on. */
  configure(options: OpenAiBackendOptions): void;
  /** The next streamed answer waits after its first chunk until the gate is released. */
  holdNextStream(): StreamGate;
  close(): Promise<void>;
}

export const DEFAULT_USAGE: MockUsage = { promptTokens: 10, completionTokens: 20 };
export const DEFAULT_PIECES: readonly string[] = ['Hello', ' from', ' the', ' mock', ' model.'];

const endpoints: readonly LlmEndpoint[] = ['chat/completions', 'completions', 'responses', 'embeddings'];

function endpointOf(path: string): LlmEndpoint | undefined {
  // Longest first: `chat/completions` also ends with `completions`.
  return endpoints.find((endpoint) => path === `/${endpoint}` || path.endsWith(`/${endpoint}`));
}

/**
 * A deterministic vector of a text: its characters counted into 32 buckets, normalised. Equal texts embed equally,
 * texts that share most characters lie close (cosine near 1), unrelated ones apart.
 */
export function mockEmbedding(input: string): number[] {
  const vector = new Array<number>(32).fill(0);
  for (const char of input.toLowerCase()) vector[char.charCodeAt(0) % 32]! += 1;
  const norm = Math.hypot(...vector) || 1;
  return vector.map((value) => value / norm);
}

export async function startOpenAiBackend(initial: OpenAiBackendOptions = {}): Promise<OpenAiBackend> {
  let options: OpenAiBackendOptions = initial;
  const received: LlmRequest[] = [];
  const gates: { gate: StreamGate; firstWritten: () => void; released: Promise<void> }[] = [];

  const usageFor = (request: LlmRequest): MockUsage | null => {
    const usage = options.usage === undefined ? DEFAULT_USAGE : options.usage;
    return typeof usage === 'function' ? usage(request) : usage;
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: Record<string, unknown> | undefined;
      try {
        const parsed = JSON.parse(body) as unknown;
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
          json = parsed as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      const path = (request.url ?? '/').split('?')[0]!;
      const entry: LlmRequest = {
        method: request.method ?? '',
        url: request.url ?? '',
        endpoint: endpointOf(path),
        headers: request.headers,
        body,
        json,
      };
      received.push(entry);
      if (entry.method !== 'POST' || entry.endpoint === undefined || json === undefined) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ error: { message: 'not an OpenAI endpoint', type: 'invalid_request' } }),
        );
        return;
      }
      const usage = usageFor(entry);
      const pieces = options.pieces ?? DEFAULT_PIECES;
      if (json.stream === true && entry.endpoint !== 'embeddings') {
        const gate = gates.shift();
        void stream(response, entry.endpoint, json, usage, pieces, gate).catch(() => response.destroy());
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify(answer(entry.endpoint, json, usage, pieces, options.embed ?? mockEmbedding)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    configure(next) {
      options = { ...options, ...next };
    },
    holdNextStream() {
      let firstWritten!: () => void;
      let release!: () => void;
      const firstChunkWritten = new Promise<void>((resolve) => {
        firstWritten = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const gate: StreamGate = { firstChunkWritten, release };
      gates.push({ gate, firstWritten, released });
      return gate;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pending of gates.splice(0)) pending.gate.release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const created = 1_700_000_000;

function chatUsage(usage: MockUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

function responsesUsage(usage: MockUsage) {
  return {
    input_tokens: usage.promptTokens,
    output_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

function answer(
  endpoint: LlmEndpoint,
  request: Record<string, unknown>,
  usage: MockUsage | null,
  pieces: readonly string[],
  embed: (input: string) => number[],
): unknown {
  const model = typeof request.model === 'string' ? request.model : 'mock-model';
  const text = pieces.join('');
  const withUsage = <T extends object>(body: T, value: unknown) => (usage ? { ...body, usage: value } : body);
  switch (endpoint) {
    case 'chat/completions':
      return withUsage(
        {
          id: 'chatcmpl-mock',
          object: 'chat.completion',
          created,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        },
        usage && chatUsage(usage),
      );
    case 'completions':
      return withUsage(
        {
          id: 'cmpl-mock',
          object: 'text_completion',
          created,
          model,
          choices: [{ index: 0, text, finish_reason: 'stop' }],
        },
        usage && chatUsage(usage),
      );
    case 'responses':
      return withUsage(responseObject(model, text, 'completed'), usage && responsesUsage(usage));
    case 'embeddings': {
      const input = request.input;
      const inputs = Array.isArray(input) ? input.map(String) : [String(input ?? '')];
      return withUsage(
        {
          object: 'list',
          model,
          data: inputs.map((item, index) => ({ object: 'embedding', index, embedding: embed(item) })),
        },
        usage && { prompt_tokens: usage.promptTokens, total_tokens: usage.promptTokens },
      );
    }
  }
}

function responseObject(model: string, text: string, status: string) {
  return {
    id: 'resp-mock',
    object: 'response',
    created_at: created,
    status,
    model,
    output: [
      {
        type: 'message',
        id: 'msg-mock',
        role: 'assistant',
        content: text === '' ? [] : [{ type: 'output_text', text, annotations: [] }],
      },
    ],
  };
}

/** One server-sent event per element; `event` names it (the Responses API), `data` is JSON or `[DONE]`. */
function sse(data: unknown, event?: string): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`;
}

function streamEvents(
  endpoint: Exclude<LlmEndpoint, 'embeddings'>,
  request: Record<string, unknown>,
  usage: MockUsage | null,
  pieces: readonly string[],
): string[] {
  const model = typeof request.model === 'string' ? request.model : 'mock-model';
  const includeUsage =
    (request.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  if (endpoint === 'responses') {
    const text = pieces.join('');
    return [
      sse(
        { type: 'response.created', response: responseObject(model, '', 'in_progress') },
        'response.created',
      ),
      ...pieces.map((delta) =>
        sse(
          {
            type: 'response.output_text.delta',
            item_id: 'msg-mock',
            output_index: 0,
            content_index: 0,
            delta,
          },
          'response.output_text.delta',
        ),
      ),
      sse(
        {
          type: 'response.completed',
          response: {
            ...responseObject(model, text, 'completed'),
            ...(usage ? { usage: responsesUsage(usage) } : {}),
          },
        },
        'response.completed',
      ),
    ];
  }
  const chat = endpoint === 'chat/completions';
  const base = {
    id: chat ? 'chatcmpl-mock' : 'cmpl-mock',
    object: chat ? 'chat.completion.chunk' : 'text_completion',
    created,
    model,
  };
  const choice = (piece: string | undefined, finish: string | null) =>
    chat
      ? { index: 0, delta: piece === undefined ? {} : { content: piece }, finish_reason: finish }
      : { index: 0, text: piece ?? '', finish_reason: finish };
  return [
    ...pieces.map((piece) =>
      sse({ ...base, choices: [choice(piece, null)], ...(includeUsage ? { usage: null } : {}) }),
    ),
    sse({ ...base, choices: [choice(undefined, 'stop')], ...(includeUsage ? { usage: null } : {}) }),
    ...(includeUsage && usage ? [sse({ ...base, choices: [], usage: chatUsage(usage) })] : []),
    sse('[DONE]'),
  ];
}

async function stream(
  response: ServerResponse,
  endpoint: Exclude<LlmEndpoint, 'embeddings'>,
  request: Record<string, unknown>,
  usage: MockUsage | null,
  pieces: readonly string[],
  gate: { gate: StreamGate; firstWritten: () => void; released: Promise<void> } | undefined,
): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.flushHeaders();
  const events = streamEvents(endpoint, request, usage, pieces);
  for (const [index, event] of events.entries()) {
    await new Promise<void>((resolve, reject) =>
      response.write(event, (error) => (error ? reject(error) : resolve())),
    );
    if (index === 0 && gate) {
      gate.firstWritten();
      await gate.released;
    }
  }
  response.end();
}
