import { createServer } from 'node:http';

/**
 * The LLM benchmark's backend: every POST answers a streamed chat completion — CHUNKS server-sent events of a few
 * tokens each, written one by one (a turn of the event loop apart, so they leave as separate writes), then the
 * `include_usage` chunk and `[DONE]`. GET / answers 200 (readiness).
 */
const chunks = Number(process.env.CHUNKS ?? 20);
const event = (data: unknown) => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
const base = {
  id: 'chatcmpl-bench',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'gpt-4o',
};
const pieces = Array.from({ length: chunks }, (_, i) =>
  event({
    ...base,
    choices: [{ index: 0, delta: { content: ` token${i}` }, finish_reason: null }],
    usage: null,
  }),
);
const tail = [
  event({
    ...base,
    choices: [],
    usage: { prompt_tokens: 12, completion_tokens: chunks * 2, total_tokens: 12 + chunks * 2 },
  }),
  event('[DONE]'),
];
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

createServer((request, response) => {
  if (request.method !== 'POST') {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('ok');
    return;
  }
  request.resume();
  request.on('end', async () => {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const piece of [...pieces, ...tail]) {
      if (response.destroyed) return;
      response.write(piece);
      await turn();
    }
    response.end();
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
