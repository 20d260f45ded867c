import { describe, expect, it } from 'vitest';
import { ResponseModel } from '../../../../src/expr/index.js';
import { fakeServices, inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

describe('send-request', () => {
  it('builds the request from its children and stores the response as an IResponse', async () => {
    const services = fakeServices();
    services.route('https://auth.example.com/token', {
      status: 200,
      body: '{"access_token":"t-1"}',
      headers: [['Content-Type', 'application/json']],
    });
    const { context } = await inbound(
      `<send-request mode="new" response-variable-name="tokens" timeout="20" ignore-error="false">
         <set-url>@("https://auth.example.com/" + "token")</set-url>
         <set-method>POST</set-method>
         <set-header name="Content-Type" exists-action="override"><value>application/x-www-form-urlencoded</value></set-header>
         <set-body>grant_type=client_credentials</set-body>
       </send-request>
       <set-variable name="token" value="@((string)((IResponse)context.Variables[&quot;tokens&quot;]).Body.As&lt;JObject&gt;()[&quot;access_token&quot;])" />`,
      { headers: [['X-Client', 'c']] },
      services,
    );
    expect(services.fetched).toEqual([
      {
        method: 'POST',
        url: 'https://auth.example.com/token',
        headers: [['Content-Type', 'application/x-www-form-urlencoded']],
        body: Buffer.from('grant_type=client_credentials'),
        timeoutMs: 20_000,
      },
    ]);
    expect(context.variables.get('tokens')).toBeInstanceOf(ResponseModel);
    expect(context.variables.get('token')).toBe('t-1');
  });

  it('copies the incoming request in mode copy', async () => {
    const services = fakeServices();
    services.route('https://gw.example.com/orders?x=1', { status: 204 });
    await inbound(
      '<send-request mode="copy" response-variable-name="r" />',
      {
        url: 'https://gw.example.com/orders?x=1',
        method: 'PUT',
        headers: [['X-A', '1']],
        body: Buffer.from('b'),
      },
      services,
    );
    expect(services.fetched[0]).toMatchObject({
      method: 'PUT',
      url: 'https://gw.example.com/orders?x=1',
      headers: [['X-A', '1']],
    });
    expect(services.fetched[0]?.body?.toString()).toBe('b');
  });

  it('stores null with ignore-error, else fails into on-error', async () => {
    const quiet = await inbound(
      '<send-request response-variable-name="r" ignore-error="true"><set-url>https://down.example.com/</set-url></send-request>',
    );
    expect(quiet.context.variables.get('r')).toBeNull();
    const loud = await inbound(
      '<send-request response-variable-name="r"><set-url>https://down.example.com/</set-url></send-request>',
    );
    expect(loud.context.lastError?.reason).toBe('BackendConnectionFailure');
    expect(loud.outcome.kind === 'respond' && loud.outcome.response.status).toBe(500);
  });

  it('accepts managed-identity authentication (the identities section), which needs a resource', () => {
    expect(
      diagnosticsOf(
        '<send-request response-variable-name="r"><set-url>https://x/</set-url><authentication-managed-identity resource="https://vault.azure.net" /></send-request>',
      ),
    ).toEqual([]);
    expect(
      diagnosticsOf(
        '<send-request response-variable-name="r"><set-url>https://x/</set-url><authentication-managed-identity /></send-request>',
      ),
    ).toEqual([expect.stringContaining('resource')]);
    expect(diagnosticsOf('<send-request response-variable-name="r" />')).toEqual([
      'policies/inbound/send-request[1]: send-request in mode "new" needs a <set-url>, got none',
    ]);
  });
});
