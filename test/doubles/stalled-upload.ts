import http2 from 'node:http2';
import { connect, type Socket } from 'node:net';

/** An upload that sends part of a body and then neither finishes nor leaves until told to. */
export interface StalledUpload {
  /** The answer's status once one came (0: none yet), e.g. 408 at the request deadline or 413 over the limit. */
  status(): number;
  /** Resolves with the status once the gateway answered or closed the connection (0: closed without one). */
  readonly settled: Promise<number>;
  /** The client gives up: the connection (HTTP/1.1) or the stream (HTTP/2, RST_STREAM CANCEL) is reset. */
  abandon(): void;
}

export interface StalledUploadOptions {
  readonly protocol: 'http1' | 'http2';
  /** Body bytes sent before stalling. */
  readonly bytes: number;
  /** HTTP/1.1: chunked (no length) or a declared content-length larger than what is sent. */
  readonly chunked?: boolean;
}

/** Starts an upload to `baseUrl` + `path` that sends `bytes` of body and then stalls, mid-body. */
export function stalledUpload(baseUrl: string, path: string, options: StalledUploadOptions): StalledUpload {
  return options.protocol === 'http1'
    ? http1Upload(baseUrl, path, options)
    : http2Upload(baseUrl, path, options);
}

function http1Upload(baseUrl: string, path: string, options: StalledUploadOptions): StalledUpload {
  const url = new URL(baseUrl);
  const socket: Socket = connect(Number(url.port), url.hostname);
  let answer = '';
  let status = 0;
  const settled = new Promise<number>((resolve) => {
    socket.on('data', (data: Buffer) => {
      answer += data.toString('latin1');
      status ||= Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
      if (status) resolve(status);
    });
    socket.on('close', () => resolve(status));
  });
  socket.on('error', () => {});
  const framing = options.chunked ? 'transfer-encoding: chunked' : `content-length: ${options.bytes + 1}`;
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: text/plain\r\n${framing}\r\n\r\n`,
  );
  const chunk = 16 * 1024;
  for (let sent = 0; sent < options.bytes; sent += chunk) {
    const size = Math.min(chunk, options.bytes - sent);
    const data = 'u'.repeat(size);
    socket.write(options.chunked ? `${size.toString(16)}\r\n${data}\r\n` : data);
  }
  return { status: () => status, settled, abandon: () => socket.destroy() };
}

function http2Upload(baseUrl: string, path: string, options: StalledUploadOptions): StalledUpload {
  const session = http2.connect(baseUrl);
  session.on('error', () => {});
  const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'text/plain' });
  let status = 0;
  const settled = new Promise<number>((resolve) => {
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
      resolve(status);
    });
    stream.on('close', () => {
      resolve(status);
      session.close();
    });
  });
  stream.on('error', () => {});
  stream.write(Buffer.alloc(options.bytes, 'u'));
  return {
    status: () => status,
    settled,
    abandon: () => {
      stream.close(http2.constants.NGHTTP2_CANCEL);
      session.close();
    },
  };
}
