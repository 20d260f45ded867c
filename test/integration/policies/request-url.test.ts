import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * context.Request.OriginalUrl is the URL the client called, the API's URL suffix and the gateway's host included:
 * public API Management policies find the operation's part with
 * `context.Request.OriginalUrl.Path.Substring(context.Api.Path.Length)` and build absolute gateway links from
 * OriginalUrl's scheme, host and port.
 */
describe('context.Request.OriginalUrl through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('fid', backend.url, [['url', 'GET', '/expr/url', 'url.xml']])}\n`,
      {
        'url.xml': policy({
          inbound: `
    <set-header name="X-Original" exists-action="override"><value>@(context.Request.OriginalUrl.ToString())</value></set-header>
    <set-header name="X-Operation-Part" exists-action="override"><value>@(context.Request.OriginalUrl.Path.Substring(context.Api.Path.Length))</value></set-header>
    <set-header name="X-Link" exists-action="override"><value>@(context.Request.OriginalUrl.Scheme + "://" + context.Request.OriginalUrl.Host + ":" + context.Request.OriginalUrl.Port + context.Request.OriginalUrl.Path)</value></set-header>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('keeps the URL suffix and the host the client called', async () => {
    const response = await fetch(`${gateway.url}/fid/expr/url?page=2`);
    expect(response.status).toBe(200);
    const received = backend.received.at(-1)!;
    // The backend still gets the operation's path under the service URL.
    expect(received.url).toBe('/expr/url?page=2');
    expect(received.headers['x-original']).toBe(`${gateway.url}/fid/expr/url?page=2`);
    expect(received.headers['x-operation-part']).toBe('/expr/url');
    expect(received.headers['x-link']).toBe(`${gateway.url}/fid/expr/url`);
  });
});
