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

/**
 * context.Request.Url is the URL the request is forwarded to: the backend's base URL (path included) and the
 * operation's path, as Microsoft's public snippets read it — "Back-end API redundancy" checks
 * `context.Request.Url.Host` against the backend it set, "Get X-CSRF token from SAP gateway" sends a HEAD to
 * `context.Request.Url.ToString()` (the SAP backend), "Generate Azure Relay Token" signs it as the relay's resource
 * URI. set-backend-service moves it; a send-request in copy mode goes there too.
 */
describe('context.Request.Url through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('fid', `${backend.url}/base`, [
        ['url', 'GET', '/expr/url', 'url.xml'],
        ['moved', 'GET', '/expr/moved', 'moved.xml'],
        ['copy', 'GET', '/expr/copy', 'copy.xml'],
      ])}\n`,
      {
        'url.xml': policy({
          inbound: `
    <set-header name="X-Url" exists-action="override"><value>@(context.Request.Url.ToString())</value></set-header>
    <set-header name="X-Url-Path" exists-action="override"><value>@(context.Request.Url.Path)</value></set-header>`,
        }),
        'moved.xml': policy({
          inbound: `
    <set-header name="X-Before" exists-action="override"><value>@(context.Request.Url.ToString())</value></set-header>
    <set-backend-service base-url="${backend.url}/moved" />
    <set-header name="X-After" exists-action="override"><value>@(context.Request.Url.ToString())</value></set-header>`,
        }),
        'copy.xml': policy({
          inbound: `
    <send-request mode="copy" response-variable-name="copied" timeout="10">
      <set-header name="X-Side-Request" exists-action="override"><value>yes</value></set-header>
    </send-request>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('is the backend URL: the service URL with its path, then the operation path and the query', async () => {
    const response = await fetch(`${gateway.url}/fid/expr/url?page=2`);
    expect(response.status).toBe(200);
    const received = backend.received.at(-1)!;
    expect(received.url).toBe('/base/expr/url?page=2');
    expect(received.headers['x-url']).toBe(`${backend.url}/base/expr/url?page=2`);
    expect(received.headers['x-url-path']).toBe('/base/expr/url');
  });

  it('follows set-backend-service', async () => {
    const response = await fetch(`${gateway.url}/fid/expr/moved`);
    expect(response.status).toBe(200);
    const received = backend.received.at(-1)!;
    expect(received.url).toBe('/moved/expr/moved');
    expect(received.headers['x-before']).toBe(`${backend.url}/base/expr/moved`);
    expect(received.headers['x-after']).toBe(`${backend.url}/moved/expr/moved`);
  });

  it('is where a send-request in copy mode goes without set-url', async () => {
    const before = backend.received.length;
    const response = await fetch(`${gateway.url}/fid/expr/copy?q=1`);
    expect(response.status).toBe(200);
    const side = backend.received
      .slice(before)
      .find((request) => request.headers['x-side-request'] === 'yes');
    expect(side?.url).toBe('/base/expr/copy?q=1');
  });
});
