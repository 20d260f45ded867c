/**
 * The floor of any ext_proc server written for Node: `node:http2` serving the Process method with nothing on top —
 * no gRPC library, no protobuf decoding, no engine. Each request message gets one answer, encoded once at start:
 * CONTINUE for the request headers with no mutation (Envoy already set x-request-id), which is what the Go no-op and
 * the engine's pass-through answer there. Not a server to run: what bench/transport.ts measures it for is how much
 * of the engine's cost per request Node's HTTP/2 alone takes. Also serves grpc.health.v1 Check (SERVING), which
 * Envoy's health check of the engine cluster calls.
 */
import http2 from 'node:http2';
import { encodeProcessingResponse } from '../../src/extproc/proto.js';

const port = Number(process.env.PORT);

/** One gRPC message frame: no compression, 4-byte big-endian length, the bytes. */
function frame(message: Buffer): Buffer {
  const framed = Buffer.alloc(5 + message.length);
  framed.writeUInt32BE(message.length, 1);
  message.copy(framed, 5);
  return framed;
}

const continueRequestHeaders = frame(encodeProcessingResponse({ request_headers: { response: {} } }));
// HealthCheckResponse { status: SERVING (1) }: field 1, varint.
const serving = frame(Buffer.from([0x08, 0x01]));

function endWithOk(stream: http2.ServerHttp2Stream, last?: Buffer): void {
  stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(last);
}

const server = http2.createServer();
server.on('stream', (stream, headers) => {
  stream.on('error', () => {});
  const method = headers[':path'];
  if (method === '/envoy.service.ext_proc.v3.ExternalProcessor/Process') {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    // The bench's requests have no body and the answer asks for nothing more: one message in, one out.
    stream.on('data', () => stream.write(continueRequestHeaders));
    stream.on('end', () => endWithOk(stream));
  } else if (method === '/grpc.health.v1.Health/Check') {
    stream.resume();
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      endWithOk(stream, serving);
    });
  } else {
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' },
      { endStream: true },
    );
  }
});
server.listen(port, '127.0.0.1');
