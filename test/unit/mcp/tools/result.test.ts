import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { findRevision } from '../../../../src/mcp/protocol/revisions.js';
import { toToolResult } from '../../../../src/mcp/tools/result.js';
import type { GatewayResponse } from '../../../../src/mcp/types.js';

const r2511 = findRevision('2025-11-25')!;
const r2503 = findRevision('2025-03-26')!;
const r2411 = findRevision('2024-11-05')!;

function response(status: number, type: string | undefined, body: Buffer | string): GatewayResponse {
  return { status, headers: type ? { 'Content-Type': type } : {}, body: Buffer.from(body) };
}

function convert(res: GatewayResponse, revision = r2511) {
  const result = toToolResult(res, revision, 'tool');
  expect(CallToolResultSchema.safeParse(result).success).toBe(true);
  return result;
}

describe('tool results', () => {
  it('JSON arrays are wrapped in { result } for structuredContent', () => {
    expect(convert(response(200, 'application/json; charset=utf-8', '[1,2]'))).toEqual({
      content: [{ type: 'text', text: '[1,2]' }],
      structuredContent: { result: [1, 2] },
    });
  });

  it('no structuredContent before 2025-06-18, nor for JSON that does not parse', () => {
    expect(convert(response(200, 'application/json', '{"a":1}'), r2503)).toEqual({
      content: [{ type: 'text', text: '{"a":1}' }],
    });
    expect(convert(response(200, 'application/problem+json', '{oops'))).toEqual({
      content: [{ type: 'text', text: '{oops' }],
    });
  });

  it('text and XML are text; an empty body says the status', () => {
    expect(convert(response(200, 'application/xml', '<a/>'))).toEqual({
      content: [{ type: 'text', text: '<a/>' }],
    });
    expect(convert(response(204, undefined, ''))).toEqual({
      content: [{ type: 'text', text: 'HTTP 204 No Content' }],
    });
    expect(convert(response(404, 'text/plain', ''))).toEqual({
      content: [{ type: 'text', text: 'HTTP 404 Not Found' }],
      isError: true,
    });
  });

  it('images are image content; audio only from 2025-03-26; other bytes are an embedded resource', () => {
    const bytes = Buffer.from([1, 2, 3]);
    expect(convert(response(200, 'image/png', bytes)).content).toEqual([
      { type: 'image', data: 'AQID', mimeType: 'image/png' },
    ]);
    expect(convert(response(200, 'audio/wav', bytes)).content).toEqual([
      { type: 'audio', data: 'AQID', mimeType: 'audio/wav' },
    ]);
    expect(convert(response(200, 'audio/wav', bytes), r2411).content).toEqual([
      {
        type: 'resource',
        resource: { uri: 'portcullis-tool://tool/response', mimeType: 'audio/wav', blob: 'AQID' },
      },
    ]);
    expect(convert(response(200, 'application/pdf', bytes)).content).toEqual([
      {
        type: 'resource',
        resource: { uri: 'portcullis-tool://tool/response', mimeType: 'application/pdf', blob: 'AQID' },
      },
    ]);
  });
});
