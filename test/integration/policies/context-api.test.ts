import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * `context.Api` in expressions: ServiceUrl is an IUrl of the API's service URL
 * (https://learn.microsoft.com/azure/api-management/api-management-policy-expressions#ContextVariables: IApi has
 * `IUrl ServiceUrl`). The rewrite of backend links is the one of Azure/api-management-policy-snippets'
 * "Request OAuth2 access token from SAP using AAD JWT token" (`find-and-replace from="@(context.Api.ServiceUrl.Host
 * +":"+ context.Api.ServiceUrl.Port)"`).
 */
describe('context.Api through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;
  let backendHostPort: string;

  beforeAll(async () => {
    backend = await startEchoBackend(() => ({
      headers: { 'content-type': 'text/plain' },
      body: `next page: ${backend.url}/svc/items?page=2`,
    }));
    backendHostPort = new URL(backend.url).host;
    gateway = await startGateway(
      `apis:\n${apiYaml('ctx', `${backend.url}/svc`, [
        ['show', 'GET', '/show', 'show.xml'],
        ['links', 'GET', '/links', 'links.xml'],
        ['redirect', 'GET', '/redirect', 'redirect.xml'],
      ])}\n`,
      {
        'show.xml': policy({
          inbound: `<return-response>
            <set-status code="200" />
            <set-body>@(context.Api.ServiceUrl.ToString() + "|" + context.Api.ServiceUrl.Scheme + "|" + context.Api.ServiceUrl.Host + "|" + context.Api.ServiceUrl.Port + "|" + context.Api.ServiceUrl.Path)</set-body>
          </return-response>`,
        }),
        'links.xml': policy({
          // Raw quotes inside the attribute, as the snippet writes them.
          outbound:
            '<find-and-replace from="@(context.Api.ServiceUrl.Host +":"+ context.Api.ServiceUrl.Port + context.Api.ServiceUrl.Path)" to="gateway.example/ctx" />',
        }),
        'redirect.xml': policy({ outbound: '<redirect-content-urls />' }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('ServiceUrl is the IUrl of the API service URL', async () => {
    const response = await fetch(`${gateway.url}/ctx/show`);
    expect(response.status).toBe(200);
    const [host, port] = backendHostPort.split(':');
    expect(await response.text()).toBe(`${backend.url}/svc|http|${host}|${port}|/svc`);
  });

  it("ServiceUrl rewrites the backend's links, as the public snippet does", async () => {
    const response = await fetch(`${gateway.url}/ctx/links`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('next page: http://gateway.example/ctx/items?page=2');
  });

  // redirect-content-urls takes the backend's base from ServiceUrl when no policy chose another backend.
  it('redirect-content-urls rewrites links to the service URL into gateway links', async () => {
    const response = await fetch(`${gateway.url}/ctx/redirect`);
    expect(await response.text()).toBe(`next page: ${gateway.url}/ctx/items?page=2`);
  });
});
