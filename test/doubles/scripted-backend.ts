import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The JSON echo the test backend answers with. */
export interface Echo {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

export async function echoOf(response: Response): Promise<Echo> {
  return (await response.json()) as Echo;
}

export interface ScriptedBackend {
  readonly url: string;
  readonly port: number;
  /** Requests received per path (without the query). */
  readonly hits: Map<string, number>;
  /** Bodies received, oldest first. */
  readonly bodies: string[];
  close(): Promise<void>;
}

/** A backend whose answers a test scripts per request (slow answers, redirects, failures). */
export async function startScriptedBackend(
  handle: (request: IncomingMessage, response: ServerResponse, body: string, hit: number) => void,
): Promise<ScriptedBackend> {
  const hits = new Map<string, number>();
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = (request.url ?? '/').split('?')[0]!;
      const hit = (hits.get(path) ?? 0) + 1;
      hits.set(path, hit);
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      handle(request, response, body, hit);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
