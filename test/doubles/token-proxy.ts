import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A POST the proxy answers itself instead of forwarding (see `startTokenProxy`'s `answer`). */
export interface ProxyAnswer {
  readonly status: number;
  readonly body: unknown;
}

export interface TokenProxy {
  /** `http://127.0.0.1:<port>`: what a client that knows nothing of OAuth is pointed at. */
  readonly url: string;
  /** `127.0.0.1:<port>`, the authority clients send as `Host`. */
  readonly authority: string;
  /** Every forwarded request as `METHOD path host=<Host> origin=<Origin> -> status`, oldest first. */
  readonly log: string[];
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy for clients that cannot authenticate (the MCP conformance suite sends no token): it adds
 * `Authorization: Bearer <token>` and forwards everything else — method, path, body, and `Host`/`Origin` exactly
 * as the client sent them — to `upstream` (the gateway listener), streaming the answer back (SSE included). It
 * rewrites no header, so the endpoint's own Host/Origin checks decide about foreign hosts, not the proxy.
 */
export async function startTokenProxy(options: {
  readonly upstream: string;
  readonly token: string;
  /** A port chosen beforehand (the gateway's configuration names the proxy's origin); any free one when absent. */
  readonly port?: number;
  /**
   * Sees each POST body first; a JSON answer it returns is sent back as is (logged `-> <status> (proxy)`) and the
   * request goes no further. For a client's test hooks that a gateway has no business serving.
   */
  readonly answer?: (body: Buffer) => Promise<ProxyAnswer | undefined>;
}): Promise<TokenProxy> {
  const { upstream, token } = options;
  const target = new URL(upstream);
  const log: string[] = [];
  const server = createServer(async (incoming, outgoing) => {
    if (options.answer && incoming.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of incoming) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const answered = await options.answer(body).catch((error: Error) => ({
        status: 500,
        body: { error: `token proxy: ${error.message}` },
      }));
      if (answered) {
        const failure = answered.status >= 500 ? `: ${JSON.stringify(answered.body)}` : '';
        log.push(`POST ${incoming.url} -> ${answered.status} (proxy${failure})`);
        outgoing.writeHead(answered.status, { 'content-type': 'application/json' });
        outgoing.end(JSON.stringify(answered.body));
        return;
      }
      forward(incoming, outgoing, body);
      return;
    }
    forward(incoming, outgoing);
  });
  /** Sends the request on with the token (`body` when it was read already, else the request's own stream). */
  const forward = (incoming: IncomingMessage, outgoing: ServerResponse, body?: Buffer) => {
    const headers = { ...incoming.headers, authorization: `Bearer ${token}` };
    const forwarded = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers,
        // A fresh connection per request, so closing the proxy never waits on a pooled socket.
        agent: false,
      },
      (answer) => {
        log.push(
          `${incoming.method} ${incoming.url} host=${incoming.headers.host ?? ''} origin=${incoming.headers.origin ?? ''} -> ${answer.statusCode}`,
        );
        outgoing.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', (error) => {
      if (outgoing.headersSent) outgoing.destroy(error);
      else outgoing.writeHead(502, { 'content-type': 'text/plain' }).end(`token proxy: ${error.message}`);
    });
    // A client hanging up (an SSE stream it is done with) ends the upstream request too.
    outgoing.on('close', () => forwarded.destroy());
    if (body) forwarded.end(body);
    else incoming.pipe(forwarded);
  };
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    authority: `127.0.0.1:${port}`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
