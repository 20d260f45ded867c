import http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GrpcH2Listener,
  GrpcServerCall,
  GrpcStatus,
  healthCheckMethod,
  listenGrpcH2,
} from '../../../src/extproc/grpc-h2.js';
import { checkEngineHealth } from '../../../src/extproc/health-client.js';

/**
 * The engine's own gRPC-over-HTTP/2 server (src/extproc/grpc-h2.ts), spoken to by a raw node:http2 client so the
 * framing is the test's own, not a gRPC library's: messages split and joined anywhere, the limits, the statuses.
 * An echo method stands for Process: each message back, reversed, and OK when the client half-closes.
 */

let listener: GrpcH2Listener;
/** What Node gave the server's streams that the client reset (the Reset method). */
const resetErrors: Error[] = [];
const health = new Map([
  ['', 'SERVING' as const],
  ['echo.Echo', 'NOT_SERVING' as const],
]);

beforeAll(async () => {
  listener = await listenGrpcH2(
    { host: '127.0.0.1', port: 0 },
    new Map([
      [
        '/echo.Echo/Reverse',
        (stream: http2.ServerHttp2Stream) => {
          const call = new GrpcServerCall<Buffer, Buffer>(
            stream,
            (bytes) => Buffer.from(bytes),
            (message) => message,
            64,
          );
          call.on('data', (message: Buffer) => call.write(Buffer.from(message).reverse()));
          call.on('end', () => call.end());
        },
      ],
      ['/grpc.health.v1.Health/Check', healthCheckMethod(health)],
      [
        '/echo.Echo/Reset',
        (stream: http2.ServerHttp2Stream) => {
          stream.on('error', (error) => resetErrors.push(error));
          stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
        },
      ],
    ]),
    1 << 20,
  );
});

afterAll(() => listener?.shutdown(100));

const frame = (text: string, flag = 0) => {
  const bytes = Buffer.from(text);
  const framed = Buffer.alloc(5 + bytes.length);
  framed[0] = flag;
  framed.writeUInt32BE(bytes.length, 1);
  bytes.copy(framed, 5);
  return framed;
};

interface Reply {
  status: number;
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  messages: string[];
}

/** One call: writes `chunks` (raw bytes, as they should cross) and half-closes; collects what came back. */
async function call(path: string, chunks: Buffer[], method = 'POST'): Promise<Reply> {
  const session = http2.connect(`http://127.0.0.1:${listener.port}`);
  try {
    const request = session.request({
      ':method': method,
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    const reply: Reply = { status: 0, headers: {}, trailers: {}, messages: [] };
    request.on('response', (headers) => {
      reply.status = Number(headers[':status']);
      reply.headers = headers;
    });
    request.on('trailers', (trailers) => (reply.trailers = trailers));
    const received: Buffer[] = [];
    request.on('data', (chunk: Buffer) => received.push(chunk));
    for (const chunk of chunks) request.write(chunk);
    request.end();
    await new Promise((resolve) => request.on('close', resolve));
    let bytes = Buffer.concat(received);
    while (bytes.length >= 5) {
      const length = bytes.readUInt32BE(1);
      reply.messages.push(bytes.subarray(5, 5 + length).toString());
      bytes = bytes.subarray(5 + length);
    }
    return reply;
  } finally {
    session.close();
  }
}

/** The status of a reply: in the trailers, or in the headers of a trailers-only reply. */
const statusOf = (reply: Reply) => ({
  code: Number(reply.trailers['grpc-status'] ?? reply.headers['grpc-status']),
  message: decodeURIComponent(String(reply.trailers['grpc-message'] ?? reply.headers['grpc-message'] ?? '')),
});

describe('gRPC over HTTP/2 (the engine transport)', () => {
  it('answers each message in order with OK in the trailers, whatever the chunk boundaries', async () => {
    const wire = Buffer.concat([frame('abc'), frame(''), frame('hello')]);
    const split = [wire.subarray(0, 2), wire.subarray(2, 7), wire.subarray(7, 13), wire.subarray(13)];
    const reply = await call('/echo.Echo/Reverse', split);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/grpc');
    expect(reply.messages).toEqual(['cba', '', 'olleh']);
    expect(statusOf(reply)).toEqual({ code: GrpcStatus.OK, message: '' });
  });

  it('refuses a message over the limit with RESOURCE_EXHAUSTED, before reading it', async () => {
    const reply = await call('/echo.Echo/Reverse', [frame('x'.repeat(65))]);
    expect(reply.messages).toEqual([]);
    expect(statusOf(reply)).toEqual({
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      message: 'a message of 65 bytes is over the limit of 64',
    });
  });

  it('refuses a compressed message with UNIMPLEMENTED (no encoding was offered)', async () => {
    const reply = await call('/echo.Echo/Reverse', [frame('ok'), frame('zipped', 1)]);
    expect(reply.messages).toEqual(['ko']);
    expect(statusOf(reply)).toEqual({
      code: GrpcStatus.UNIMPLEMENTED,
      message: 'compressed messages are not accepted',
    });
  });

  it('fails a stream that ends inside a message with INTERNAL', async () => {
    const reply = await call('/echo.Echo/Reverse', [frame('whole').subarray(0, 7)]);
    expect(statusOf(reply)).toEqual({
      code: GrpcStatus.INTERNAL,
      message: 'the stream ended inside a message',
    });
  });

  it('answers a method it does not serve with UNIMPLEMENTED, trailers-only', async () => {
    const reply = await call('/echo.Echo/Nothing', [frame('x')]);
    expect(reply.status).toBe(200);
    expect(reply.headers['grpc-status']).toBe(String(GrpcStatus.UNIMPLEMENTED));
  });

  it('answers what is not a gRPC call (not POST) with 415', async () => {
    const reply = await call('/echo.Echo/Reverse', [], 'PUT');
    expect(reply.status).toBe(415);
  });

  it('serves grpc.health.v1 Check to a gRPC library client: SERVING, NOT_SERVING, NOT_FOUND', async () => {
    expect(await checkEngineHealth('127.0.0.1', listener.port)).toBe(true);
    const healthRequest = (service: string) => {
      const name = Buffer.from(service);
      return frame(Buffer.concat([Buffer.from([0x0a, name.length]), name]).toString('latin1'));
    };
    const notServing = await call('/grpc.health.v1.Health/Check', [healthRequest('echo.Echo')]);
    expect(notServing.messages.map((m) => [...Buffer.from(m, 'latin1')])).toEqual([[0x08, 2]]);
    const unknown = await call('/grpc.health.v1.Health/Check', [healthRequest('other')]);
    expect(statusOf(unknown)).toEqual({ code: GrpcStatus.NOT_FOUND, message: 'unknown service "other"' });
  });
});

describe('a stream the client resets with an error code (Envoy does, after every exchange)', () => {
  it("gives Node's stream error a one-line stack, and leaves every other error's frames", async () => {
    const session = http2.connect(`http://127.0.0.1:${listener.port}`);
    try {
      const request = session.request({
        ':method': 'POST',
        ':path': '/echo.Echo/Reset',
        'content-type': 'application/grpc',
      });
      // The client's own stream fails the same way when it resets.
      request.on('error', () => {});
      await new Promise((resolve) => request.once('response', resolve));
      request.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      const deadline = Date.now() + 5_000;
      while (resetErrors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    } finally {
      session.close();
    }
    expect(resetErrors.map((error) => [(error as { code?: string }).code, error.stack])).toEqual([
      [
        'ERR_HTTP2_STREAM_ERROR',
        'Error [ERR_HTTP2_STREAM_ERROR]: Stream closed with error code NGHTTP2_INTERNAL_ERROR',
      ],
    ]);
    const elsewhere = new Error('elsewhere');
    expect(elsewhere.stack).toMatch(/^Error: elsewhere\n {4}at /);
    expect(await checkEngineHealth('127.0.0.1', listener.port)).toBe(true);
  });
});

describe("the engine's gRPC status codes", () => {
  it('are the numbers @grpc/grpc-js (and the gRPC specification) give them', async () => {
    const { status } = await import('@grpc/grpc-js');
    for (const [name, code] of Object.entries(GrpcStatus))
      expect(status[name as keyof typeof status]).toBe(code);
  });
});
