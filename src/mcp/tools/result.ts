import { STATUS_CODES } from 'node:http';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/client';
import type { Revision } from '../protocol/revisions.js';
import type { GatewayResponse } from '../types.js';

function headerValue(headers: GatewayResponse['headers'], name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    return Array.isArray(value) ? value[0] : (value as string | undefined);
  }
  return undefined;
}

function mediaType(response: GatewayResponse): string {
  const raw = response.contentType ?? headerValue(response.headers, 'content-type') ?? '';
  return raw.split(';')[0]!.trim().toLowerCase();
}

function isJson(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

function isText(type: string): boolean {
  return (
    type === '' ||
    type.startsWith('text/') ||
    type === 'application/xml' ||
    type.endsWith('+xml') ||
    type === 'application/javascript' ||
    type === 'application/x-www-form-urlencoded' ||
    type === 'application/problem+json'
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function statusLine(status: number): string {
  return `HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd();
}

/**
 * Turns the gateway's HTTP response into a tool result. JSON becomes text plus `structuredContent` (wrapped
 * in `{ result }` when it is not an object, since `structuredContent` must be one); 4xx/5xx are tool errors
 * (`isError: true`) the model can read, with the status line first.
 */
export function toToolResult(
  response: GatewayResponse,
  revision: Revision,
  toolName: string,
): CallToolResult {
  const type = mediaType(response);
  const isError = response.status >= 400;
  const content: ContentBlock[] = [];
  if (isError) content.push({ type: 'text', text: statusLine(response.status) });
  let structuredContent: Record<string, unknown> | undefined;

  if (response.body.length === 0) {
    if (!isError) content.push({ type: 'text', text: statusLine(response.status) });
  } else if (isJson(type)) {
    const text = response.body.toString('utf8');
    content.push({ type: 'text', text });
    if (revision.titlesAndStructuredContent) {
      try {
        const parsed: unknown = JSON.parse(text);
        structuredContent = isObject(parsed) ? parsed : { result: parsed };
      } catch {
        // A body labelled JSON that is not JSON stays text only.
      }
    }
  } else if (isText(type)) {
    content.push({ type: 'text', text: response.body.toString('utf8') });
  } else if (type.startsWith('image/')) {
    content.push({ type: 'image', data: response.body.toString('base64'), mimeType: type });
  } else if (type.startsWith('audio/') && revision.audioContent) {
    content.push({ type: 'audio', data: response.body.toString('base64'), mimeType: type });
  } else {
    content.push({
      type: 'resource',
      resource: {
        uri: `portcullis-tool://${toolName}/response`,
        mimeType: type,
        blob: response.body.toString('base64'),
      },
    });
  }

  const result: CallToolResult = { content };
  if (structuredContent !== undefined) result.structuredContent = structuredContent;
  if (isError) result.isError = true;
  return result;
}
