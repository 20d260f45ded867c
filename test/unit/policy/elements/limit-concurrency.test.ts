import { describe, expect, it } from 'vitest';
import { PipelineRun } from '../../../../src/policy/runner.js';
import { fakeServices, pipelineOf, policies, request } from '../fakes.js';

describe('limit-concurrency', () => {
  it('refuses with 429 beyond max-count requests inside at once, per key, and frees slots', async () => {
    const pipeline = pipelineOf(
      policies({
        inbound: `<limit-concurrency key="@(context.Request.Headers.GetValueOrDefault(&quot;X-K&quot;, &quot;&quot;))" max-count="1">
                    <send-request response-variable-name="r"><set-url>https://slow.example.com/</set-url></send-request>
                  </limit-concurrency>`,
      }),
    );
    const services = fakeServices();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const original = services.fetch;
    Object.assign(services, {
      fetch: async (req: Parameters<typeof original>[0]) => {
        await gate;
        return { status: 200, reason: 'OK', headers: [], body: Buffer.from(req.url) };
      },
    });
    const start = (key: string) =>
      new PipelineRun(pipeline, request({ headers: [['X-K', key]] }), services).onRequest();
    const first = start('a');
    const second = await start('a');
    const other = start('b');
    expect(second.kind === 'respond' && second.response.status).toBe(429);
    release();
    expect((await first).kind).toBe('forward');
    expect((await other).kind).toBe('forward');
    expect((await start('a')).kind).toBe('forward');
  });
});
