import { describe, expect, it } from 'vitest';
import { PipelineRun } from '../../../../src/policy/runner.js';
import { fakeServices, pipelineOf, policies, request } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

const forward = async (backend: string) => {
  const run = new PipelineRun(pipelineOf(policies({ backend })), request(), fakeServices());
  return run.onRequest();
};

describe('forward-request', () => {
  it('records the defaults for the transport', async () => {
    const outcome = await forward('<forward-request />');
    expect(outcome.kind === 'forward' && outcome.request.forward).toEqual({
      timeoutMs: 300_000,
      continueTimeoutMs: undefined,
      httpVersion: '1',
      followRedirects: false,
      bufferRequestBody: false,
      bufferResponse: true,
      failOnErrorStatusCode: false,
    });
  });

  it('records every attribute', async () => {
    const outcome = await forward(
      '<forward-request timeout-ms="1500" continue-timeout="2" http-version="2or1" follow-redirects="@(true)" buffer-request-body="true" buffer-response="false" fail-on-error-status-code="true" />',
    );
    expect(outcome.kind === 'forward' && outcome.request.forward).toEqual({
      timeoutMs: 1500,
      continueTimeoutMs: 2000,
      httpVersion: '2or1',
      followRedirects: true,
      bufferRequestBody: true,
      bufferResponse: false,
      failOnErrorStatusCode: true,
    });
  });

  it('without it the backend is not called and outbound runs on an empty 200', async () => {
    const run = new PipelineRun(
      pipelineOf(policies({ backend: '', outbound: '<set-header name="X-O"><value>1</value></set-header>' })),
      request(),
      fakeServices(),
    );
    const outcome = await run.onRequest();
    expect(outcome.kind).toBe('respond');
    if (outcome.kind !== 'respond') return;
    expect(outcome.response.status).toBe(200);
    expect(outcome.response.headers).toContainEqual(['X-O', '1']);
  });

  it('turns a 4xx/5xx into on-error with fail-on-error-status-code', async () => {
    const run = new PipelineRun(
      pipelineOf(
        policies({
          backend: '<forward-request fail-on-error-status-code="true" />',
          'on-error': '<set-header name="X-E"><value>@(context.LastError.Source)</value></set-header>',
        }),
      ),
      request(),
      fakeServices(),
    );
    await run.onRequest();
    const response = await run.onResponse({ status: 503, headers: [] });
    expect(response.status).toBe(503);
    expect(response.headers).toContainEqual(['X-E', 'forward-request']);
  });

  it('is allowed only in backend and not with both timeouts', () => {
    expect(diagnosticsOf('<forward-request />')[0]).toContain(
      'is not allowed in the inbound section (allowed: backend)',
    );
    expect(diagnosticsOf('<forward-request timeout="1" timeout-ms="1" />', 'backend')).toEqual([
      'policies/backend/forward-request[1]: forward-request takes timeout or timeout-ms, got both',
    ]);
  });
});
