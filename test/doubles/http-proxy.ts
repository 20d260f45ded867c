import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { type AddressInfo, connect } from 'node:net';

export interface ProxiedRequest {
  /** The request target as the proxy received it: absolute form (`http://host:port/path`) for a proxied request. */
  readonly target: string;
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
}

export interface HttpProxyDouble {
  readonly url: string;
  /** Every request the proxy forwarded, oldest first. */
  readonly received: ProxiedRequest[];
  close(): Promise<void>;
}

/**
 * A forward HTTP proxy on loopback: it takes an absolute-form request (a plain-http target), records it and relays
 * it to the target, or opens a CONNECT tunnel (an https target: recorded with the `host:port` target, the bytes
 * relayed unread). `credentials` ("user:password") makes it answer 407 to a request without them.
 */
export async function startHttpProxy(credentials?: string): Promise<HttpProxyDouble> {
  const received: ProxiedRequest[] = [];
  const server = createServer((req, res) => {
    received.push({ target: req.url ?? '', method: req.method ?? '', headers: req.headers });
    const expected = credentials ? `Basic ${Buffer.from(credentials).toString('base64')}` : undefined;
    if (expected !== undefined && req.headers['proxy-authorization'] !== expected) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="proxy"' }).end();
      return;
    }
    if (!req.url?.startsWith('http://')) {
      res.writeHead(400).end('absolute-form request expected');
      return;
    }
    const { 'proxy-authorization': _auth, 'proxy-connection': _pc, ...headers } = req.headers;
    const upstream = httpRequest(req.url, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connect', (req, client, head) => {
    received.push({ target: req.url ?? '', method: req.method ?? '', headers: req.headers });
    const expected = credentials ? `Basic ${Buffer.from(credentials).toString('base64')}` : undefined;
    if (expected !== undefined && req.headers['proxy-authorization'] !== expected) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
      return;
    }
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host ?? '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
