import { createServer, type ServerResponse } from 'node:http';

/**
 * A stand-in OpenAI-compatible model for the example: POST …/chat/completions, …/completions, …/responses and
 * …/embeddings answer a fixed text with `usage`, as JSON or, with `"stream": true`, as server-sent events (the usage
 * chunk when `stream_options.include_usage` asks for it; the Responses API's `response.completed`).
 */
const reply = ['Hello', ' from', ' the', ' example', ' model.'];
const created = Math.floor(Date.now() / 1000);
/** Which deployment this is: sent back in `x-backend`, so a client sees which one of the pool answered. */
const name = process.env.NAME ?? 'example';
/**
 * THROTTLE_AFTER=N: after every N model calls the next one is refused with 429 and `Retry-After: RETRY_AFTER`
 * seconds, as an Azure OpenAI deployment out of its tokens-per-minute quota answers. Unset: never.
 */
const throttleAfter = Number(process.env.THROTTLE_AFTER ?? 0);
const retryAfter = process.env.RETRY_AFTER ?? '10';
let calls = 0;

function usageOf(body: Record<string, unknown>) {
  const prompt = Math.max(
    1,
    Math.ceil(JSON.stringify(body.messages ?? body.input ?? body.prompt ?? '').length / 4),
  );
  return { prompt_tokens: prompt, completion_tokens: reply.length, total_tokens: prompt + reply.length };
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

async function stream(response: ServerResponse, events: string[]): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) {
    response.write(event);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  response.end();
}

const sse = (data: unknown, event?: string) =>
  `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

const server = createServer((request, response) => {
  if (request.url === '/healthz') return json(response, 200, { status: 'ok' });
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return json(response, 400, {
        error: { message: 'the body must be JSON', type: 'invalid_request_error' },
      });
    }
    const path = (request.url ?? '').split('?')[0] ?? '';
    response.setHeader('x-backend', name);
    if (throttleAfter > 0 && ++calls % (throttleAfter + 1) === 0) {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter });
      response.end(
        JSON.stringify({ error: { code: '429', message: 'Rate limit is exceeded. Try again later.' } }),
      );
      return;
    }
    const model = typeof body.model === 'string' ? body.model : 'example-model';
    const usage = usageOf(body);
    if (path.endsWith('/embeddings'))
      return json(response, 200, {
        object: 'list',
        model,
        data: [{ object: 'embedding', index: 0, embedding: [0.6, 0.8] }],
        usage: { prompt_tokens: usage.prompt_tokens, total_tokens: usage.prompt_tokens },
      });
    if (path.endsWith('/responses')) {
      const done = {
        id: 'resp-example',
        object: 'response',
        model,
        status: 'completed',
        output: [
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: reply.join('') }] },
        ],
        usage: {
          input_tokens: usage.prompt_tokens,
          output_tokens: usage.completion_tokens,
          total_tokens: usage.total_tokens,
        },
      };
      if (body.stream !== true) return json(response, 200, done);
      return void stream(response, [
        ...reply.map((delta) =>
          sse({ type: 'response.output_text.delta', delta }, 'response.output_text.delta'),
        ),
        sse({ type: 'response.completed', response: done }, 'response.completed'),
      ]);
    }
    if (!path.endsWith('/completions'))
      return json(response, 404, { error: { message: 'unknown endpoint' } });
    const chat = path.endsWith('/chat/completions');
    const base = { id: 'cmpl-example', object: chat ? 'chat.completion' : 'text_completion', created, model };
    if (body.stream !== true)
      return json(response, 200, {
        ...base,
        choices: [
          chat
            ? { index: 0, message: { role: 'assistant', content: reply.join('') }, finish_reason: 'stop' }
            : { index: 0, text: reply.join(''), finish_reason: 'stop' },
        ],
        usage,
      });
    const includeUsage =
      (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    const chunk = { ...base, object: chat ? 'chat.completion.chunk' : 'text_completion' };
    return void stream(response, [
      ...reply.map((piece) =>
        sse({
          ...chunk,
          choices: [chat ? { index: 0, delta: { content: piece } } : { index: 0, text: piece }],
        }),
      ),
      ...(includeUsage ? [sse({ ...chunk, choices: [], usage })] : []),
      sse('[DONE]'),
    ]);
  });
});

const port = Number(process.env.PORT ?? 8082);
server.listen(port, '127.0.0.1', () => console.log(`example model ${name} on http://127.0.0.1:${port}/v1`));
