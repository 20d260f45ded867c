import { describe, expect, it } from 'vitest';
import { PipelineRun } from '../../../../src/policy/runner.js';
import { waitMs } from '../../../../src/policy/shared/retry-schedule.js';
import { fakeServices, inbound, pipelineOf, policies, request } from '../../../doubles/policy-services.js';

const counter =
  '<set-variable name="n" value="@(context.Variables.GetValueOrDefault&lt;int&gt;(&quot;n&quot;, 0) + 1)" />';

describe('retry', () => {
  it('runs its statements once, then again while the condition holds, up to count retries', async () => {
    const { context, services } = await inbound(
      `<retry condition="@(context.Variables.GetValueOrDefault&lt;int&gt;(&quot;n&quot;, 0) &lt; 10)" count="3" interval="2">${counter}</retry>`,
    );
    expect(context.variables.get('n')).toBe(4);
    expect(services.sleeps).toEqual([2000, 2000, 2000]);
  });

  it('stops as soon as the condition is false', async () => {
    const { context, services } = await inbound(
      `<retry condition="@(context.Variables.GetValueOrDefault&lt;int&gt;(&quot;n&quot;, 0) &lt; 2)" count="5" interval="1" first-fast-retry="true">${counter}</retry>`,
    );
    expect(context.variables.get('n')).toBe(2);
    expect(services.sleeps).toEqual([]);
  });

  it('waits fixed, linear or exponential intervals', () => {
    expect([1, 2, 3].map((a) => waitMs(a, 2, undefined, undefined))).toEqual([2000, 2000, 2000]);
    expect([1, 2, 3].map((a) => waitMs(a, 2, undefined, 1))).toEqual([2000, 3000, 4000]);
    expect([1, 2, 3, 4].map((a) => waitMs(a, 1, 10, 2))).toEqual([3000, 7000, 10000, 10000]);
  });

  it('around forward-request records the settings for the transport', async () => {
    const run = new PipelineRun(
      pipelineOf(
        policies({
          backend:
            '<retry condition="@(context.Response.StatusCode == 503)" count="2" interval="1" delta="1"><forward-request buffer-request-body="true" /></retry>',
        }),
      ),
      request(),
      fakeServices(),
    );
    const outcome = await run.onRequest();
    if (outcome.kind !== 'forward') throw new Error('expected forward');
    const retry = outcome.request.retry!;
    expect([
      retry.count,
      retry.intervalSeconds,
      retry.deltaSeconds,
      retry.maxIntervalSeconds,
      retry.firstFastRetry,
    ]).toEqual([2, 1, 1, undefined, false]);
    await run.onResponse({ status: 503, headers: [] });
    expect(retry.condition(run.run)).toBe(true);
  });
});
