import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BodyGateway, startBodyGateway } from '../../processes/body-gateway.js';
import { until } from '../../processes/wait.js';

const mebibyte = 1024 * 1024;
const limit = mebibyte;

/**
 * Issue 13, item 1: a body larger than Envoy's buffer limit, sent to an operation whose policy reads the body,
 * used to hang (no 413) until the stream idle timeout, and tearing those requests down crashed Envoy 1.40.0. Now it
 * is refused with 413 while it is buffered, and clients that give up leave nothing behind.
 */
describe('request bodies over the buffer limit, through Envoy', () => {
  let gateway: BodyGateway;

  beforeAll(async () => {
    gateway = await startBodyGateway(
      // Short enough that a request left hanging would be torn down (the crash) while this file runs.
      `maxRequestBodyBytes: ${limit}, streamIdleTimeoutMs: 3000`,
    );
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  /** Envoy still runs, answers /ready, and a normal request through a body-reading policy gets 200. */
  async function expectEnvoyServing(): Promise<void> {
    expect(gateway.envoy.log()).not.toContain('Segmentation fault');
    expect(gateway.envoy.running()).toBe(true);
    expect(await (await fetch(`${gateway.envoy.adminUrl}/ready`)).text()).toContain('LIVE');
    const response = await fetch(`${gateway.url}/body/upper`, { method: 'POST', body: 'still here' });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"method":"POST"');
    expect(gateway.backend.received.at(-1)!.body).toBe('STILL HERE');
  }

  /** No request is left open in Envoy (a hung one would stay until the idle timeout). */
  async function expectNothingHanging(): Promise<void> {
    await until(
      async () =>
        (await gateway.envoy.stats('downstream_rq_active')).get('http.ingress_http.downstream_rq_active') ===
        0,
      'every gateway request to be over',
      2500,
    );
  }

  it('refuses 3 MiB sent at once with a prompt 413 and a JSON body, and Envoy keeps serving', async () => {
    const started = Date.now();
    const response = await fetch(`${gateway.url}/body/upper`, {
      method: 'POST',
      body: Buffer.alloc(3 * mebibyte, 'a'),
      signal: AbortSignal.timeout(10_000),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      statusCode: 413,
      message: `The request body is larger than this operation accepts (${limit} bytes).`,
    });
    expect(Date.now() - started).toBeLessThan(2500);
    await expectNothingHanging();
    await expectEnvoyServing();
  });

  it('refuses a chunked 3 MiB body (no content-length) with 413 once it passes the limit', async () => {
    const answer = await rawPost(gateway.url, '/body/upper', {
      chunked: true,
      bytes: 3 * mebibyte,
      chunk: 256 * 1024,
    });
    expect(answer.status).toBe(413);
    await expectNothingHanging();
    await expectEnvoyServing();
  });

  it('still gives a policy a body just under the limit', async () => {
    const body = 'b'.repeat(limit - 1024);
    const response = await fetch(`${gateway.url}/body/upper`, { method: 'POST', body });
    expect(response.status).toBe(200);
    expect(gateway.backend.received.at(-1)!.body).toBe(body.toUpperCase());
  });

  it('still gives a policy a chunked body under the limit, and forwards what the policy made of it', async () => {
    const answer = await rawPost(gateway.url, '/body/upper', {
      chunked: true,
      bytes: 200 * 1024,
      chunk: 64 * 1024,
    });
    expect(answer.status).toBe(200);
    expect(gateway.backend.received.at(-1)!.body).toBe('A'.repeat(200 * 1024));
  });

  it('streams a body of any size to an operation whose policies do not read it', async () => {
    const response = await fetch(`${gateway.url}/body/stream`, {
      method: 'POST',
      body: Buffer.alloc(3 * mebibyte, 'c'),
    });
    expect(response.status).toBe(200);
    expect(gateway.backend.received.at(-1)!.body.length).toBe(3 * mebibyte);
  });

  it('survives clients that send 3 MiB at once and go away before the answer, 5 times', async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      await rawPost(gateway.url, '/body/upper', {
        bytes: 3 * mebibyte,
        chunk: 3 * mebibyte,
        abortAfterBytes: 3 * mebibyte,
      });
      await expectNothingHanging();
    }
    // No need to sit out the idle timeout: the crash came from Envoy tearing down a hung request, and
    // expectNothingHanging has just shown there is none left for the timer to tear down.
    await expectEnvoyServing();
  }, 60_000);

  it('survives clients that upload slowly and abort mid-body, 5 times', async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      await rawPost(gateway.url, '/body/upper', {
        bytes: 3 * mebibyte,
        chunk: 64 * 1024,
        everyMs: 5,
        abortAfterBytes: (attempt % 2 === 0 ? 0.5 : 1.5) * mebibyte,
      });
      await expectNothingHanging();
    }
    await expectEnvoyServing();
  }, 60_000);
});

interface RawPostOptions {
  readonly bytes: number;
  readonly chunk: number;
  /** Pause between chunks (none: as fast as the socket takes them). */
  readonly everyMs?: number;
  readonly chunked?: boolean;
  /** Destroy the connection once this many body bytes are written (after the answer's status line, if any). */
  readonly abortAfterBytes?: number;
}

/**
 * A POST over a raw socket, so the test controls pacing, framing and when the client goes away. Resolves with the
 * answer's status (0 when none came) once the client is done: after the answer, or after aborting.
 */
function rawPost(baseUrl: string, path: string, options: RawPostOptions): Promise<{ status: number }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = '';
    let sent = 0;
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0) });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `no answer and not aborted within 10 s (sent ${sent} bytes, got ${JSON.stringify(answer)})`,
        ),
      );
    }, 10_000);
    socket.on('data', (data: Buffer) => {
      answer += data.toString('latin1');
      if (/\r\n\r\n/.test(answer)) {
        clearTimeout(timer);
        done();
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      done();
    });
    const framing = options.chunked ? 'transfer-encoding: chunked' : `content-length: ${options.bytes}`;
    socket.write(
      `POST ${path} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: text/plain\r\n${framing}\r\n\r\n`,
    );
    const writeNext = () => {
      if (finished) return;
      if (options.abortAfterBytes !== undefined && sent >= options.abortAfterBytes) {
        clearTimeout(timer);
        done();
        return;
      }
      if (sent >= options.bytes) {
        if (options.chunked) socket.write('0\r\n\r\n');
        return;
      }
      const size = Math.min(options.chunk, options.bytes - sent);
      const data = Buffer.alloc(size, 'a');
      socket.write(
        options.chunked
          ? Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), data, Buffer.from('\r\n')])
          : data,
      );
      sent += size;
      setTimeout(writeNext, options.everyMs ?? 0);
    };
    writeNext();
  });
}
