/**
 * The prompt of a language-model request body, as the AI gateway elements read it: OpenAI chat completions
 * (`messages`), Anthropic Messages (`messages` and a top-level `system`), OpenAI Responses (`instructions` and
 * `input`), legacy completions (`prompt`) and Gemini as Vertex AI serves it natively (`systemInstruction`,
 * `contents`). Content given as parts keeps its text parts only (images and audio
 * carry no text to compare or screen).
 */

import { geminiContents } from './prompt-tokens.js';

export interface PromptMessage {
  /** `system`, `developer`, `user`, `assistant`, `tool` …; items of a Responses input without a role: their type. */
  readonly role: string;
  readonly text: string;
}

/** Roles that instruct the model rather than ask it (OpenAI's `developer` replaces `system` for newer models). */
export const SYSTEM_ROLES: ReadonlySet<string> = new Set(['system', 'developer']);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The text of a message's content: a string, or the `text` of each part (text, input_text, output_text …). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      typeof part === 'string' ? part : isRecord(part) && typeof part.text === 'string' ? part.text : '',
    )
    .filter((text) => text !== '')
    .join('\n');
}

/** The messages of a parsed request body, in order; undefined when the body is not a language-model request. */
export function promptMessages(body: unknown): PromptMessage[] | undefined {
  if (!isRecord(body)) return undefined;
  const messages: PromptMessage[] = [];
  if (body.system !== undefined) messages.push({ role: 'system', text: contentText(body.system) });
  if (typeof body.instructions === 'string') messages.push({ role: 'system', text: body.instructions });
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) {
      if (!isRecord(message)) continue;
      messages.push({ role: String(message.role ?? 'user'), text: contentText(message.content) });
    }
    return messages;
  }
  if (typeof body.input === 'string') return [...messages, { role: 'user', text: body.input }];
  if (Array.isArray(body.input)) {
    for (const item of body.input) {
      if (typeof item === 'string') messages.push({ role: 'user', text: item });
      else if (isRecord(item) && item.role !== undefined)
        messages.push({ role: String(item.role), text: contentText(item.content) });
      else if (isRecord(item) && typeof item.output === 'string')
        messages.push({ role: String(item.type ?? 'tool'), text: item.output });
    }
    return messages;
  }
  if (Array.isArray(body.contents))
    return geminiContents(body).map(({ role, parts }) => ({ role, text: contentText(parts) }));
  if (typeof body.prompt === 'string') return [...messages, { role: 'user', text: body.prompt }];
  if (Array.isArray(body.prompt) && body.prompt.every((p) => typeof p === 'string'))
    return [...messages, ...body.prompt.map((text: string) => ({ role: 'user', text }))];
  return undefined;
}

/** The request body as JSON, or undefined when it is absent or not JSON. */
export function jsonBody(bytes: Uint8Array | undefined): unknown {
  if (bytes === undefined || bytes.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return undefined;
  }
}
