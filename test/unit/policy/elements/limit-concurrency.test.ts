import { describe, expect, it } from 'vitest';
import { PipelineRun } from '../../../../src/policy/runner.js';
import { fakeServices, pipelineOf, policies, request } from '../../../doubles/policy-services.js';

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

  it('holds the slot of a wrapped forward-request until the backend answered, or the transport gave up', async () => {
    const pipeline = pipelineOf(
      policies({
        backend: '<limit-concurrency key="backend" max-count="1"><forward-request /></limit-concurrency>',
      }),
    );
    const services = fakeServices();
    const first = new PipelineRun(pipeline, request(), services);
    expect((await first.onRequest()).kind).toBe('forward');
    // The backend call is in flight: the slot is still taken.
    const second = await new PipelineRun(pipeline, request(), services).onRequest();
    expect(second.kind === 'respond' && second.response.status).toBe(429);
    expect(second.kind === 'respond' && JSON.parse(second.response.body.toString())).toEqual({
      statusCode: 429,
      message: 'Too many requests',
    });
    await first.onResponse({ status: 200, headers: [] });
    await first.run.end();
    const third = new PipelineRun(pipeline, request(), services);
    expect((await third.onRequest()).kind).toBe('forward');
    // A request the client abandoned gives its slot back through end().
    await third.end();
    expect((await new PipelineRun(pipeline, request(), services).onRequest()).kind).toBe('forward');
  });

  it('gives the slot back when its statements fail', async () => {
    const pipeline = pipelineOf(
      policies({
        inbound: `<limit-concurrency key="k" max-count="1">
                    <set-variable name="x" value="@(int.Parse(&quot;not a number&quot;))" />
                  </limit-concurrency>`,
      }),
    );
    const services = fakeServices();
    for (let i = 0; i < 2; i++) {
      const outcome = await new PipelineRun(pipeline, request(), services).onRequest();
      expect(outcome.kind === 'respond' && outcome.response.status).toBe(500);
    }
    const counted = services.counts.filter((c) => c.element === 'limit-concurrency');
    expect(counted.map((c) => c.outcome)).not.toContain('refused');
  });
});
