import { describe, expect, it } from 'vitest';
import {
  type ServerSentEvent,
  SseScanner,
  UsageMeter,
  usageOfJson,
} from '../../../../src/policy/shared/llm-usage.js';

/** Feeds `text` to a scanner cut at the given byte offsets. */
function scan(text: string | Buffer, cuts: readonly number[], maxCarryBytes?: number) {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const events: ServerSentEvent[] = [];
  let overflows = 0;
  const scanner = new SseScanner(
    (event) => events.push(event),
    maxCarryBytes,
    () => overflows++,
  );
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    scanner.push(bytes.subarray(from, cut));
    from = cut;
  }
  scanner.end();
  return { events, overflows };
}

const stream = [
  ': keep-alive comment\n',
  'event: response.output_text.delta\n',
  'data: {"delta":"héllo ✓"}\n\n',
  'data: {"choices":[],\r\n',
  'data: "usage":{"prompt_tokens":7,"completion_tokens":5,"total_tokens":12}}\r\n\r\n',
  'data: [DONE]\r\r',
].join('');

const expected: ServerSentEvent[] = [
  { event: 'response.output_text.delta', data: '{"delta":"héllo ✓"}' },
  {
    event: '',
    data: '{"choices":[],\n"usage":{"prompt_tokens":7,"completion_tokens":5,"total_tokens":12}}',
  },
  { event: '', data: '[DONE]' },
];

describe('SseScanner', () => {
  it('reads the same events whatever the chunk boundaries (inside lines, characters, CR LF pairs)', () => {
    const length = Buffer.byteLength(stream);
    expect(scan(stream, []).events).toEqual(expected);
    // Every single cut, and every pair of cuts.
    for (let a = 1; a < length; a++) {
      expect(scan(stream, [a]).events, `cut at ${a}`).toEqual(expected);
      for (let b = a + 1; b < length; b += 7)
        expect(scan(stream, [a, b]).events, `cuts ${a}, ${b}`).toEqual(expected);
    }
    // One byte at a time.
    expect(
      scan(
        stream,
        Array.from({ length: length - 1 }, (_, i) => i + 1),
      ).events,
    ).toEqual(expected);
  });

  it('carries at most its bound: a longer event is skipped whole and scanning resumes after it', () => {
    const long = `data: ${'x'.repeat(5000)}\n\ndata: {"usage":{"total_tokens":3}}\n\n`;
    for (const cuts of [[], [100], [100, 2000, 4000], [5006, 5007]]) {
      const { events, overflows } = scan(long, cuts, 1024);
      expect(events, String(cuts)).toEqual([{ event: '', data: '{"usage":{"total_tokens":3}}' }]);
      expect(overflows).toBe(1);
    }
    // Several data lines that together outgrow the bound.
    const lines = `${'data: 0123456789\n'.repeat(200)}\ndata: ok\n\n`;
    expect(scan(lines, [333], 1024).events).toEqual([{ event: '', data: 'ok' }]);
  });
});

describe('UsageMeter', () => {
  const meter = (text: string, cuts: readonly number[] = []) => {
    const m = new UsageMeter();
    const bytes = Buffer.from(text);
    let from = 0;
    for (const cut of [...cuts, bytes.length]) {
      m.push(bytes.subarray(from, cut));
      from = cut;
    }
    return m.end();
  };

  it('reads a chat completion stream with include_usage, cut anywhere', () => {
    const text = `data: {"choices":[{"delta":{"content":"a"}}],"usage":null}\n\ndata: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}\n\ndata: [DONE]\n\n`;
    for (let cut = 1; cut < text.length; cut++)
      expect(meter(text, [cut]), `cut at ${cut}`).toEqual({
        promptTokens: 9,
        completionTokens: 4,
        totalTokens: 13,
      });
  });

  it("reads the Responses API's response.completed event", () => {
    const text = `event: response.created\ndata: {"type":"response.created","response":{"status":"in_progress"}}\n\nevent: response.completed\ndata: {"type":"response.completed","response":{"usage":{"input_tokens":3,"output_tokens":8,"total_tokens":11}}}\n\n`;
    expect(meter(text, [50, 120])).toEqual({ promptTokens: 3, completionTokens: 8, totalTokens: 11 });
  });

  it("merges Anthropic's usage, reported in parts", () => {
    const text = `event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":25,"output_tokens":1}}}\n\nevent: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":15}}\n\n`;
    expect(meter(text)).toEqual({ promptTokens: 25, completionTokens: 15, totalTokens: 40 });
  });

  it("reads Gemini's usageMetadata (Vertex AI's native API): an answer, an event stream, a JSON array of chunks", () => {
    const usage = '"usageMetadata":{"promptTokenCount":6,"candidatesTokenCount":4,"totalTokenCount":10}';
    const expected = { promptTokens: 6, completionTokens: 4, totalTokens: 10 };
    expect(meter(`{"candidates":[{"content":{"parts":[{"text":"hi"}]}}],${usage}}`, [7])).toEqual(expected);
    const stream = `data: {"candidates":[],"usageMetadata":{"promptTokenCount":6}}\n\ndata: {"candidates":[],${usage}}\n\n`;
    for (let cut = 1; cut < stream.length; cut += 7)
      expect(meter(stream, [cut]), `cut at ${cut}`).toEqual(expected);
    expect(meter(`[{"usageMetadata":{"promptTokenCount":6}},{${usage}}]`, [3])).toEqual(expected);
  });

  it('reads JSON answers: chat completions, embeddings, responses; none without usage', () => {
    expect(meter('{"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}', [5])).toEqual({
      promptTokens: 1,
      completionTokens: 2,
      totalTokens: 3,
    });
    expect(usageOfJson({ data: [], usage: { prompt_tokens: 8, total_tokens: 8 } })).toEqual({
      promptTokens: 8,
      completionTokens: 0,
      totalTokens: 8,
    });
    expect(usageOfJson({ usage: { input_tokens: 2, output_tokens: 3 } })).toEqual({
      promptTokens: 2,
      completionTokens: 3,
      totalTokens: 5,
    });
    expect(meter('{"choices":[]}')).toBeUndefined();
    expect(meter('data: {"choices":[]}\n\ndata: [DONE]\n\n')).toBeUndefined();
    expect(meter('not json')).toBeUndefined();
  });
});
