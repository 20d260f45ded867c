/**
 * Resolves the message a statement acts on. set-header, set-body and set-status change the request in inbound
 * and backend, the response in outbound and on-error, and the message their parent is building inside
 * return-response or send-request. The choice is made at compile time; this is the per-request lookup.
 */
import { HeaderCollection, MessageBody, type RequestModel, ResponseModel } from '../expr/index.js';
import type { MessageTarget } from './element.js';
import type { RunContext } from './runtime.js';

export interface Message {
  headers: HeaderCollection;
  body: MessageBody | null;
}

export function requestOf(run: RunContext, target: MessageTarget): RequestModel {
  if (target === 'pending-request') {
    if (run.pendingRequest === undefined) throw new TypeError('no request is being built here');
    return run.pendingRequest;
  }
  return run.context.request;
}

/** The response for this target, created (200 OK, empty) when the pipeline has none yet. */
export function responseOf(run: RunContext, target: MessageTarget): ResponseModel {
  if (target === 'pending-response') {
    if (run.pendingResponse === undefined) throw new TypeError('no response is being built here');
    return run.pendingResponse;
  }
  run.context.response ??= new ResponseModel({ headers: new HeaderCollection() });
  return run.context.response;
}

export function messageOf(run: RunContext, target: MessageTarget): Message {
  return target === 'request' || target === 'pending-request'
    ? requestOf(run, target)
    : responseOf(run, target);
}

/** Replaces a message body and records it for the transport. */
export function replaceBody(run: RunContext, target: MessageTarget, content: Buffer | string): void {
  const message = messageOf(run, target);
  if (message.body === null) message.body = new MessageBody(content);
  else message.body.replace(content);
  if (target === 'request') run.requestBodyChanged = true;
  if (target === 'response') run.responseBodyChanged = true;
}

/** The body as text without consuming it (policies that transform the body read it this way). */
export function bodyText(message: Message): string {
  return message.body === null ? '' : message.body.bytes.toString('utf8');
}

/** Standard reason phrases, for set-status without `reason` and default error responses. */
export const REASONS: Readonly<Record<number, string>> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export function reasonPhrase(status: number): string {
  return REASONS[status] ?? '';
}
