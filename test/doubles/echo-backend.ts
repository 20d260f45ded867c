import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The header lines as received, name and value alternating (repeated lines stay apart, unlike `headers`). */
  readonly rawHeaders: readonly string[];
  readonly body: string;
}

export interface EchoBackend {
  readonly url: string;
  readonly port: number;
  /** Every request received, oldest first. */
  readonly received: ReceivedRequest[];
  close(): Promise<void>;
}

/**
 * A backend that records each request and answers 200 with a JSON echo of it (or what `respond` says), on
 * `host` (loopback unless a test's other hosts must reach it).
 */
export async function startEchoBackend(
  respond?: (
    request: ReceivedRequest,
  ) => { status?: number; headers?: Record<string, string>; body?: string } | undefined,
  host = '127.0.0.1',
): Promise<EchoBackend> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry: ReceivedRequest = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        rawHeaders: request.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(entry);
      const custom = respond?.(entry);
      const body =
        custom?.body ?? JSON.stringify({ method: entry.method, url: entry.url, headers: entry.headers });
      response.writeHead(custom?.status ?? 200, { 'content-type': 'application/json', ...custom?.headers });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
