import { describe, expect, it } from 'vitest';
import type { IdentityTokens } from '../../../../src/policy/services.js';
import { fakeServices, inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

/** An identity set that answers `token:<resource>:<client-id>`, or refuses the client-id "nobody". */
function withIdentities(asked: { resource: string; clientId?: string }[] = []) {
  const identities: IdentityTokens = {
    async token(request) {
      asked.push(request);
      if (request.clientId === 'nobody')
        throw new Error('identity "vm": endpoint answered 400 invalid_request');
      return {
        token: `token:${request.resource}:${request.clientId ?? 'default'}`,
        expiresAt: Date.now() + 60_000,
      };
    },
  };
  return Object.assign(fakeServices(), { identities });
}

describe('authentication-managed-identity', () => {
  it('sets Authorization from the default identity, the resource evaluated per request', async () => {
    const asked: { resource: string; clientId?: string }[] = [];
    const { outcome } = await inbound(
      '<authentication-managed-identity resource="@(&quot;https://&quot; + &quot;vault.azure.net&quot;)" />',
      { headers: [['Authorization', 'Bearer caller']] },
      withIdentities(asked),
    );
    if (outcome.kind !== 'forward') throw new Error('expected forward');
    expect(outcome.request.headers).toContainEqual([
      'Authorization',
      'Bearer token:https://vault.azure.net:default',
    ]);
    expect(asked).toEqual([{ resource: 'https://vault.azure.net' }]);
  });

  it('passes client-id on and writes the token into the output variable instead of the header', async () => {
    const { context, outcome } = await inbound(
      '<authentication-managed-identity resource="api://x" client-id="uami-1" output-token-variable-name="t" />',
      { headers: [['Authorization', 'Bearer caller']] },
      withIdentities(),
    );
    expect(context.variables.get('t')).toBe('token:api://x:uami-1');
    if (outcome.kind !== 'forward') throw new Error('expected forward');
    expect(outcome.request.headers).toContainEqual(['Authorization', 'Bearer caller']);
  });

  it('fails with a 500 and the reason in LastError, or goes on when ignore-error is true', async () => {
    const failed = await inbound(
      '<authentication-managed-identity resource="api://x" client-id="nobody" />',
      {},
      withIdentities(),
    );
    expect(failed.context.lastError).toMatchObject({
      source: 'authentication-managed-identity',
      reason: 'ManagedIdentityTokenNotAcquired',
      message:
        'Obtaining managed identity token for client_id: nobody and resource: api://x failed: identity "vm": endpoint answered 400 invalid_request',
    });
    if (failed.outcome.kind !== 'respond') throw new Error('expected a response');
    expect(failed.outcome.response.status).toBe(500);
    expect(failed.outcome.response.body.toString()).toBe(
      '{"statusCode":500,"message":"Internal server error"}',
    );
    const ignored = await inbound(
      '<authentication-managed-identity resource="api://x" client-id="nobody" ignore-error="true" />',
      {},
      withIdentities(),
    );
    expect(ignored.outcome.kind).toBe('forward');
    expect(ignored.services.counts).toContainEqual({
      element: 'authentication-managed-identity',
      outcome: 'failed',
      reason: 'TokenNotAcquired',
    });
  });

  it('fails when the engine has no identities at all', async () => {
    const { context } = await inbound('<authentication-managed-identity resource="api://x" />');
    expect(context.lastError?.message).toContain('no identity is configured');
  });

  it('authenticates a send-request with the same child', async () => {
    const services = withIdentities();
    services.route('https://vault.example/secrets/s', { status: 200, body: '{}' });
    await inbound(
      `<send-request mode="new" response-variable-name="r">
        <set-url>https://vault.example/secrets/s</set-url>
        <set-header name="Authorization" exists-action="override"><value>Bearer old</value></set-header>
        <authentication-managed-identity resource="https://vault.azure.net" />
      </send-request>`,
      {},
      services,
    );
    expect(services.fetched[0]!.headers).toEqual([
      ['Authorization', 'Bearer token:https://vault.azure.net:default'],
    ]);
  });

  it('needs a resource', () => {
    expect(diagnosticsOf('<authentication-managed-identity />')).toEqual([
      expect.stringContaining('resource'),
    ]);
  });
});
