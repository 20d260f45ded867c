import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type CertificateWorkshop, certificateWorkshop } from '../processes/certificates.js';

export type DocumentHandler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * An HTTPS host on loopback for client metadata documents, with its own test CA (the authorization server is told
 * to trust it): tests put a handler at a path and count the requests it received.
 */
export interface DocumentHost {
  /** `https://127.0.0.1:<port>` (the certificate also names `localhost`). */
  readonly origin: string;
  /** The CA that signed the host's certificate: PEM text and its file. */
  readonly caPem: string;
  readonly caFile: string;
  /** Answers requests for `path` with `handler`; returns the full URL. */
  serve(path: string, handler: DocumentHandler): string;
  /** Serves a JSON document at `path` (with extra response headers); returns the full URL. */
  json(path: string, document: unknown, headers?: Record<string, string>): string;
  /** Requests received for `path` so far. */
  hits(path: string): number;
  close(): Promise<void>;
}

export async function startDocumentHost(): Promise<DocumentHost> {
  const workshop: CertificateWorkshop = await certificateWorkshop();
  const ca = await workshop.authority('documents-ca', '/CN=Portcullis test document CA');
  const leaf = await ca.issue({
    name: 'documents',
    subject: '/CN=localhost',
    dns: ['localhost'],
    ips: ['127.0.0.1', '::1'],
    usage: 'server',
  });
  const handlers = new Map<string, DocumentHandler>();
  const counts = new Map<string, number>();
  const server: Server = createServer({ cert: leaf.pem, key: leaf.key }, (request, response) => {
    const path = new URL(request.url ?? '/', 'https://host').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const handler = handlers.get(path);
    if (handler) handler(request, response);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const serve = (path: string, handler: DocumentHandler) => {
    handlers.set(path, handler);
    return `${origin}${path}`;
  };
  return {
    origin,
    caPem: ca.pem,
    caFile: ca.certificateFile,
    serve,
    json(path, document, headers = {}) {
      const body = JSON.stringify(document);
      return serve(path, (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(body);
      });
    },
    hits: (path) => counts.get(path) ?? 0,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await workshop.remove();
    },
  };
}
