import { describe, expect, it } from 'vitest';
import { ResponseModel } from '../../../../src/expr/index.js';
import { header, inbound } from '../../../doubles/policy-services.js';

describe('return-response', () => {
  it('answers with 200 and an empty body by default, skipping the backend', async () => {
    const { outcome } = await inbound('<return-response />');
    expect(outcome.kind).toBe('respond');
    if (outcome.kind !== 'respond') return;
    expect([outcome.response.status, outcome.response.reason, outcome.response.body.length]).toEqual([
      200,
      'OK',
      0,
    ]);
  });

  it('builds the response from set-status, set-header and set-body in order', async () => {
    const { outcome, context } = await inbound(
      `<return-response>
         <set-status code="302" reason="Found" />
         <set-header name="Location" exists-action="override"><value>/signin</value></set-header>
         <set-body>go</set-body>
       </return-response>
       <set-variable name="after" value="1" />`,
      { headers: [['Location', 'request-header-untouched']] },
    );
    if (outcome.kind !== 'respond') throw new Error('expected respond');
    expect(outcome.response.status).toBe(302);
    expect(header(outcome.response, 'Location')).toEqual(['/signin']);
    expect(outcome.response.body.toString()).toBe('go');
    expect(context.request.headers.get('Location')).toEqual(['request-header-untouched']);
    expect(context.variables.has('after')).toBe(false);
  });

  it('starts from a response held in a variable', async () => {
    const services = (await import('../../../doubles/policy-services.js')).fakeServices();
    const { PipelineRun } = await import('../../../../src/policy/runner.js');
    const { pipelineOf, policies, request } = await import('../../../doubles/policy-services.js');
    const pipeline = pipelineOf(
      policies({
        inbound:
          '<return-response response-variable-name="r"><set-header name="X"><value>1</value></set-header></return-response>',
      }),
    );
    const run = new PipelineRun(pipeline, request(), services);
    run.context.variables.set(
      'r',
      new ResponseModel({ statusCode: 201, statusReason: 'Created', body: 'stored' }),
    );
    const outcome = await run.onRequest();
    if (outcome.kind !== 'respond') throw new Error('expected respond');
    expect(outcome.response.status).toBe(201);
    expect(outcome.response.body.toString()).toBe('stored');
    expect(header(outcome.response, 'X')).toEqual(['1']);
  });

  it('fails into on-error when the variable holds no response', async () => {
    const { context } = await inbound('<return-response response-variable-name="nope" />');
    expect(context.lastError?.source).toBe('return-response');
    expect(context.lastError?.reason).toBe('ExpressionValueEvaluationFailure');
  });
});
