import { describe, expect, it } from 'vitest';
import { inbound } from '../../../doubles/policy-services.js';

const policy = (ignoreCase: boolean) =>
  `<check-header name="X-Tier" failed-check-httpcode="403" failed-check-error-message="Tier not allowed" ignore-case="${ignoreCase}">
     <value>gold</value><value>silver</value>
   </check-header>`;

describe('check-header', () => {
  it('passes a request with an allowed value', async () => {
    const { outcome } = await inbound(policy(false), { headers: [['X-Tier', 'gold']] });
    expect(outcome.kind).toBe('forward');
  });

  it('refuses a missing header with HeaderNotFound and the configured status and message', async () => {
    const { outcome, context, services } = await inbound(policy(false));
    if (outcome.kind !== 'respond') throw new Error('expected respond');
    expect(outcome.response.status).toBe(403);
    expect(JSON.parse(outcome.response.body.toString())).toEqual({
      statusCode: 403,
      message: 'Tier not allowed',
    });
    expect(context.lastError?.reason).toBe('HeaderNotFound');
    expect(services.counts).toContainEqual({
      element: 'check-header',
      outcome: 'refused',
      reason: 'HeaderNotFound',
    });
  });

  it('refuses a value not listed with HeaderValueNotAllowed, case-sensitively unless ignore-case', async () => {
    const strict = await inbound(policy(false), { headers: [['X-Tier', 'GOLD']] });
    expect(strict.context.lastError?.reason).toBe('HeaderValueNotAllowed');
    const relaxed = await inbound(policy(true), { headers: [['X-Tier', 'GOLD']] });
    expect(relaxed.outcome.kind).toBe('forward');
  });

  it('only requires presence when no values are listed', async () => {
    const p =
      '<check-header name="X-A" failed-check-httpcode="401" failed-check-error-message="m" ignore-case="true" />';
    expect((await inbound(p, { headers: [['x-a', '']] })).outcome.kind).toBe('forward');
  });
});
