import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A handshake the backend accepted: the path and headers it arrived with. */
export interface AcceptedHandshake {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

export interface WebSocketBackend {
  readonly url: string;
  readonly handshakes: AcceptedHandshake[];
  /** Text messages received from clients, in order. */
  readonly messages: string[];
  close(): Promise<void>;
}

/** RFC 6455 §1.3: the accept value is SHA-1 of the key and this GUID, in base64. */
const acceptGuid = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/**
 * A WebSocket server on node:http's `upgrade` (RFC 6455, text frames, unfragmented): it greets each connection with
 * `hello`, answers each text message with `echo:<message>`, pongs pings and answers a close with a close. Plain
 * HTTP requests get 426.
 */
export async function startWebSocketBackend(): Promise<WebSocketBackend> {
  const handshakes: AcceptedHandshake[] = [];
  const messages: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((_request, response) => {
    response.writeHead(426, { 'content-type': 'text/plain' }).end('upgrade required');
  });
  server.on('upgrade', (request, socket: Socket) => {
    const key = request.headers['sec-websocket-key'];
    if (request.headers.upgrade?.toLowerCase() !== 'websocket' || typeof key !== 'string') {
      socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    handshakes.push({ url: request.url ?? '', headers: request.headers });
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const accept = createHash('sha1').update(`${key}${acceptGuid}`).digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`,
    );
    socket.write(frame(0x1, Buffer.from('hello')));
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const parsed = readFrame(pending);
        if (parsed === undefined) return;
        pending = pending.subarray(parsed.length);
        if (parsed.opcode === 0x1) {
          const text = parsed.payload.toString('utf8');
          messages.push(text);
          socket.write(frame(0x1, Buffer.from(`echo:${text}`)));
        } else if (parsed.opcode === 0x9) socket.write(frame(0xa, parsed.payload));
        else if (parsed.opcode === 0x8) {
          socket.end(frame(0x8, parsed.payload));
          return;
        }
      }
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    handshakes,
    messages,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A server frame: final, unmasked. */
function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const head =
    length < 126
      ? Buffer.from([0x80 | opcode, length])
      : Buffer.from([0x80 | opcode, 126, length >> 8, length & 0xff]);
  return Buffer.concat([head, payload]);
}

/** One client frame (masked, as RFC 6455 requires of clients), or undefined until it has all arrived. */
function readFrame(bytes: Buffer): { opcode: number; payload: Buffer; length: number } | undefined {
  if (bytes.length < 2) return undefined;
  const opcode = bytes[0]! & 0x0f;
  const masked = (bytes[1]! & 0x80) !== 0;
  let length = bytes[1]! & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (bytes.length < 4) return undefined;
    length = bytes.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (bytes.length < 10) return undefined;
    length = Number(bytes.readBigUInt64BE(2));
    offset = 10;
  }
  const maskKey = masked ? bytes.subarray(offset, offset + 4) : undefined;
  if (masked) offset += 4;
  if (bytes.length < offset + length) return undefined;
  const payload = Buffer.from(bytes.subarray(offset, offset + length));
  if (maskKey) for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ maskKey[i % 4]!;
  return { opcode, payload, length: offset + length };
}
