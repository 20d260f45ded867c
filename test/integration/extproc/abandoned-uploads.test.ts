import autocannon from 'autocannon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StalledUpload, stalledUpload } from '../../doubles/stalled-upload.js';
import { type BodyGateway, startBodyGateway } from '../../processes/body-gateway.js';
import { elapse, until } from '../../processes/wait.js';

const kibibyte = 1024;
const limit = 1024 * kibibyte;
const requestTimeoutMs = 2000;
const streamIdleTimeoutMs = 3000;

/**
 * Issue 29, item 1: a client that stalls an upload under the body limit and then leaves (or is timed out) made Envoy
 * 1.40 segfault. Envoy half-closed the ext_proc stream of the destroyed filter and waited for the engine's status
 * (graceful close); the status reaching that stream crashed it, the likelier the longer the exchange had lived. Now
 * Envoy resets the stream of a filter it destroys at once, never waiting for the engine; the engine writes nothing
 * to a stream Envoy half-closed (an Envoy configured elsewhere); and no upload outlives the request deadline.
 */
describe('abandoned and stalled uploads, through Envoy', () => {
  let gateway: BodyGateway;

  beforeAll(async () => {
    gateway = await startBodyGateway(
      `maxRequestBodyBytes: ${limit}, streamIdleTimeoutMs: ${streamIdleTimeoutMs}, requestTimeoutMs: ${requestTimeoutMs}`,
    );
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  const engineResets = async () =>
    (await gateway.envoy.stats('portcullis_engine.upstream_rq_tx_reset')).get(
      'cluster.portcullis_engine.upstream_rq_tx_reset',
    ) ?? 0;

  const engineGoaways = async () =>
    (await gateway.envoy.stats('portcullis_engine.upstream_cx_close_notify')).get(
      'cluster.portcullis_engine.upstream_cx_close_notify',
    ) ?? 0;

  async function expectNothingOpen(): Promise<void> {
    await until(
      async () =>
        (await gateway.envoy.stats('downstream_rq_active')).get('http.ingress_http.downstream_rq_active') ===
          0 && gateway.engine.activeStreams() === 0,
      'every gateway request and every ext_proc stream to be over',
      { timeoutMs: streamIdleTimeoutMs + 2000, everyMs: 50 },
    );
  }

  async function expectEnvoyServing(): Promise<void> {
    expect(gateway.envoy.log()).not.toContain('Segmentation fault');
    expect(gateway.envoy.running()).toBe(true);
    const response = await fetch(`${gateway.url}/body/upper`, { method: 'POST', body: 'still here' });
    expect(response.status).toBe(200);
    expect(gateway.backend.received.at(-1)!.body).toBe('STILL HERE');
  }

  it('resets the ext_proc stream of an upload its client abandoned at once, never waiting for the engine', async () => {
    const before = await engineResets();
    const upload = stalledUpload(gateway.url, '/body/upper', {
      protocol: 'http1',
      bytes: 400 * kibibyte,
      chunked: true,
    });
    // The engine has the request headers and asked for the body: its stream is open while the upload stalls.
    await until(() => gateway.engine.activeStreams() === 1, 'the exchange to reach the engine', 2000);
    await elapse(200);
    const abandoned = Date.now();
    upload.abandon();
    await until(() => gateway.engine.activeStreams() === 0, 'the engine to see its stream end', 2000);
    // Well within Envoy's 1 s remote-close timeout: Envoy reset the stream itself rather than half-close it and
    // wait. Had it waited, the engine (which answers a half-close with nothing) would have heard of it only then.
    expect(Date.now() - abandoned).toBeLessThan(500);
    expect(await engineResets()).toBe(before + 1);
    await expectNothingOpen();
    await expectEnvoyServing();
  });

  it("keeps the engine's connection through more resets than Node's HTTP/2 server allows on one", async () => {
    // Every ext_proc stream ends in Envoy's reset now; nghttp2 sends GOAWAY after 1000 resets at once (Node 20
    // cannot raise that), failing every exchange still on the connection. Envoy moves to a new connection first.
    const goawaysBefore = await engineGoaways();
    const result = await autocannon({
      url: `${gateway.url}/body/upper`,
      method: 'POST',
      body: 'x',
      connections: 50,
      amount: 4000,
    });
    expect(result.statusCodeStats).toEqual({ 200: { count: 4000 } });
    expect(await engineGoaways()).toBe(goawaysBefore);
  }, 60_000);

  it('answers 408 to an upload that has not finished by the request deadline', async () => {
    for (const protocol of ['http1', 'http2'] as const) {
      const started = Date.now();
      const upload = stalledUpload(gateway.url, '/body/upper', {
        protocol,
        bytes: 300 * kibibyte,
        chunked: true,
      });
      expect(await upload.settled).toBe(408);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(requestTimeoutMs - 100);
      expect(elapsed).toBeLessThan(streamIdleTimeoutMs);
      upload.abandon();
    }
    await expectNothingOpen();
    await expectEnvoyServing();
  });

  it('stays up through stalled uploads of every size, over HTTP/1.1 and HTTP/2, ended by the client or the deadline', async () => {
    const sizes = [kibibyte, 64 * kibibyte, 300 * kibibyte, 600 * kibibyte, limit, limit + 64 * kibibyte];
    const uploads: { upload: StalledUpload; abandonAfterMs?: number }[] = [];
    for (const protocol of ['http1', 'http2'] as const)
      for (const bytes of sizes)
        for (const abandonAfterMs of [100, 1000, undefined]) {
          for (const path of ['/body/upper', '/body/stream'])
            uploads.push({
              upload: stalledUpload(gateway.url, path, { protocol, bytes, chunked: bytes % 2 === 0 }),
              ...(abandonAfterMs === undefined ? {} : { abandonAfterMs }),
            });
        }
    // Left alone, an upload is ended by the request deadline (408), or by the 413 of a body over the limit.
    await Promise.all(
      uploads.map(async ({ upload, abandonAfterMs }) => {
        if (abandonAfterMs === undefined) {
          expect([408, 413]).toContain(await upload.settled);
          upload.abandon();
        } else {
          await elapse(abandonAfterMs);
          upload.abandon();
        }
      }),
    );
    await expectNothingOpen();
    await expectEnvoyServing();
  }, 30_000);
});
