import type { IncomingMessage } from 'node:http';

/**
 * A request body read whole, but never more than `limitBytes` of it: a declared length over the limit is refused
 * before anything is read, a body that grows past it as soon as it does. Returns undefined for a body over the limit;
 * the rest of it is drained unread, so the connection can be reused or closed. The one body reader of the Koa
 * processes (the authorization server, the MCP endpoint, the management API); each turns "too large" into its own
 * error.
 */
export async function readBoundedBody(req: IncomingMessage, limitBytes: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limitBytes) {
    req.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) {
      req.resume();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
