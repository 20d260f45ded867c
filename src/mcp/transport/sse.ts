import { PassThrough } from 'node:stream';
import type { OutboundMessage } from '../protocol/jsonrpc.js';

/** The head of every SSE reply: no caching or transforming, and no buffering by a proxy (nginx's header). */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

/**
 * One Server-Sent Events stream. Opens with a comment so the HTTP head goes out at once (a client waits for
 * it before reading), then carries one `message` event per JSON-RPC message. Keep-alive comments stop idle
 * proxies from cutting a quiet stream.
 */
export class SseStream {
  readonly body = new PassThrough();
  #closed = false;
  #keepAlive: NodeJS.Timeout | undefined;
  readonly #onClose: (() => void)[] = [];

  constructor(keepAliveMs?: number) {
    this.body.write(': stream open\n\n');
    if (keepAliveMs && keepAliveMs > 0) {
      this.#keepAlive = setInterval(() => this.#write(': keep-alive\n\n'), keepAliveMs);
      this.#keepAlive.unref();
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** One message; `id` makes it a point the client can resume from (`Last-Event-ID`). */
  send(message: OutboundMessage, id?: string): boolean {
    const idLine = id === undefined ? '' : `id: ${id}\n`;
    return this.#write(`${idLine}event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /**
   * An event with an id and no data (2025-11-25, SSE polling): the client learns where it stands before any message
   * came, so a stream cut early still resumes from the right point.
   */
  prime(id: string): boolean {
    return this.#write(`id: ${id}\ndata: \n\n`);
  }

  onClose(listener: () => void): void {
    if (this.#closed) listener();
    else this.#onClose.push(listener);
  }

  /** Ends the stream; safe to call more than once and after the client went away. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#keepAlive);
    this.body.end();
    for (const listener of this.#onClose.splice(0)) listener();
  }

  #write(chunk: string): boolean {
    if (this.#closed) return false;
    this.body.write(chunk);
    return true;
  }
}
