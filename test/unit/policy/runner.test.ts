import { describe, expect, it } from 'vitest';
import { buildPipeline } from '../../../src/policy/pipeline.js';
import { PipelineRun } from '../../../src/policy/runner.js';
import {
  compileAt,
  fakeServices,
  pipelineOf,
  policies,
  request,
  runAll,
} from '../../doubles/policy-services.js';

describe('PipelineRun', () => {
  it('sets every LastError field for a failure in a nested statement', async () => {
    const api = compileAt(
      policies({
        inbound:
          '<choose><when condition="true"><set-variable id="boom" name="x" value="@(((string)null).Length)" /></when></choose>',
        'on-error':
          '<set-header name="X-Err"><value>@(context.LastError.Source + "|" + context.LastError.Reason + "|" + context.LastError.Scope + "|" + context.LastError.Section + "|" + context.LastError.Path + "|" + context.LastError.PolicyId)</value></set-header>',
      }),
      'api',
    );
    const { response, run } = await runAll(buildPipeline({ api }), request(), fakeServices());
    expect(response.headers).toContainEqual([
      'X-Err',
      'set-variable|ExpressionValueEvaluationFailure|api|inbound|choose\\when\\set-variable|boom',
    ]);
    expect(run.context.lastError?.message).not.toBe('');
  });

  it('answers an expression failure without on-error with 500 and a safe body', async () => {
    const { response, forwarded } = await runAll(
      pipelineOf(policies({ inbound: '<set-variable name="x" value="@(int.Parse(&quot;nope&quot;))" />' })),
      request(),
      fakeServices(),
    );
    expect(forwarded).toBe(false);
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body.toString())).toEqual({
      statusCode: 500,
      message: 'Internal server error',
    });
  });

  it('stops the section at the failure', async () => {
    const { run } = await runAll(
      pipelineOf(
        policies({
          inbound:
            '<set-variable name="a" value="1" /><set-variable name="x" value="@(int.Parse(&quot;nope&quot;))" /><set-variable name="b" value="2" />',
        }),
      ),
      request(),
      fakeServices(),
    );
    expect([run.context.variables.has('a'), run.context.variables.has('b')]).toEqual([true, false]);
  });

  it('runs on-error for an outbound failure and returns what on-error built', async () => {
    const { response, run } = await runAll(
      pipelineOf(
        policies({
          outbound: '<set-status code="@(int.Parse(&quot;x&quot;))" />',
          'on-error':
            '<return-response><set-status code="502" reason="Bad" /><set-body>@(context.LastError.Section)</set-body></return-response>',
        }),
      ),
      request(),
      fakeServices(),
    );
    expect(response.status).toBe(502);
    expect(response.body.toString()).toBe('outbound');
    expect(run.context.lastError?.source).toBe('set-status');
  });

  it('answers 500 when on-error itself fails, logging why', async () => {
    const services = fakeServices();
    const { response } = await runAll(
      pipelineOf(
        policies({
          inbound: '<set-variable name="x" value="@(int.Parse(&quot;a&quot;))" />',
          'on-error': '<set-variable name="y" value="@(int.Parse(&quot;b&quot;))" />',
        }),
      ),
      request(),
      services,
    );
    expect(response.status).toBe(500);
    expect(services.logs.map((l) => l.message)).toContain('on-error section failed');
  });

  it('reports a backend failure through on-error with BackendConnectionFailure', async () => {
    const run = new PipelineRun(
      pipelineOf(
        policies({
          'on-error': '<set-header name="X-R"><value>@(context.LastError.Reason)</value></set-header>',
        }),
      ),
      request(),
      fakeServices(),
    );
    expect((await run.onRequest()).kind).toBe('forward');
    const response = await run.onBackendFailure('BackendConnectionFailure', 'connect ECONNREFUSED');
    expect(response.status).toBe(502);
    expect(response.headers).toContainEqual(['X-R', 'BackendConnectionFailure']);
  });

  it('counts allowed, refused and failed statements with the reason', async () => {
    const services = fakeServices();
    await runAll(
      pipelineOf(
        policies({
          inbound:
            '<set-header name="a"><value>1</value></set-header><check-header name="X-K" failed-check-httpcode="401" failed-check-error-message="no" ignore-case="true" />',
        }),
      ),
      request(),
      services,
    );
    await runAll(
      pipelineOf(policies({ inbound: '<set-variable name="x" value="@(int.Parse(&quot;a&quot;))" />' })),
      request(),
      services,
    );
    expect(services.counts).toEqual([
      { element: 'set-header', outcome: 'allowed' },
      { element: 'check-header', outcome: 'refused', reason: 'HeaderNotFound' },
      { element: 'set-variable', outcome: 'failed', reason: 'ExpressionValueEvaluationFailure' },
    ]);
  });

  it('forwards an empty body after an expression consumed it without preserveContent', async () => {
    const run = new PipelineRun(
      pipelineOf(
        policies({ inbound: '<set-variable name="b" value="@(context.Request.Body.As&lt;string&gt;())" />' }),
      ),
      request({ method: 'POST', body: Buffer.from('payload') }),
      fakeServices(),
    );
    const outcome = await run.onRequest();
    if (outcome.kind !== 'forward') throw new Error('expected forward');
    expect(run.context.variables.get('b')).toBe('payload');
    expect(outcome.request.bodyChanged).toBe(true);
    expect(outcome.request.body?.length).toBe(0);
  });

  it('keeps the request untouched when no policy changes it', async () => {
    const run = new PipelineRun(
      pipelineOf(policies({})),
      request({ url: 'https://gw/a%20b?x=1&x=2', headers: [['X-A', 'v']] }),
      fakeServices(),
    );
    const outcome = await run.onRequest();
    if (outcome.kind !== 'forward') throw new Error('expected forward');
    expect(outcome.request.pathAndQuery).toBe('/a%20b?x=1&x=2');
    expect(outcome.request.headers).toEqual([['X-A', 'v']]);
    expect(outcome.request.bodyChanged).toBe(false);
  });

  it('enforces the order of phases', async () => {
    const run = new PipelineRun(pipelineOf(policies({})), request(), fakeServices());
    await expect(run.onResponse({ status: 200, headers: [] })).rejects.toThrow(
      'pipeline run is in state created, expected forwarded',
    );
  });

  it('sends context.Trace to the trace sink', async () => {
    const services = fakeServices();
    await runAll(
      pipelineOf(
        policies({
          inbound: '<set-variable name="t" value="@{ context.Trace(&quot;hello&quot;); return 1; }" />',
        }),
      ),
      request(),
      services,
    );
    expect(services.traces.map((t) => t.message)).toEqual(['hello']);
  });
});
