import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedBackend, startScriptedBackend } from '../../doubles/scripted-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** retry around forward-request: the backend is called again while the condition holds, up to count. */
describe('retry through Envoy', () => {
  let backend: ScriptedBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startScriptedBackend((request, response, body, hit) => {
      const path = (request.url ?? '').split('?')[0];
      // /flaky fails twice, then answers; /broken always fails.
      if ((path === '/flaky' && hit <= 2) || path === '/broken') {
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`failure ${hit}`);
      } else {
        response
          .writeHead(200, { 'content-type': 'text/plain' })
          .end(`ok after ${hit} calls, body "${body}"`);
      }
    });
    const retry = `<retry condition="@(context.Response.StatusCode &gt;= 500)" count="3" interval="0" first-fast-retry="true">
      <forward-request buffer-request-body="true" />
    </retry>`;
    gateway = await startGateway(
      `apis:\n${apiYaml('rt', backend.url, [
        ['flaky', 'POST', '/flaky', 'retry.xml'],
        ['broken', 'GET', '/broken', 'retry.xml'],
        ['once', 'GET', '/once', 'retry.xml'],
      ])}\n`,
      {
        'retry.xml': policy(
          {
            backend: retry,
            outbound:
              '<set-header name="X-Outbound" exists-action="override"><value>ran</value></set-header>',
          },
          ['backend'],
        ),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('calls the backend again while the condition holds, with the same body; outbound sees the last answer', async () => {
    const response = await fetch(`${gateway.url}/rt/flaky`, { method: 'POST', body: 'order-1' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok after 3 calls, body "order-1"');
    expect(response.headers.get('x-outbound')).toBe('ran');
    expect(backend.hits.get('/flaky')).toBe(3);
  });

  it('stops after count retries and returns the last answer', async () => {
    const response = await fetch(`${gateway.url}/rt/broken`);
    expect(response.status).toBe(500);
    expect(await response.text()).toBe('failure 4');
    expect(backend.hits.get('/broken')).toBe(4);
  });

  it('does not retry when the condition is false', async () => {
    const response = await fetch(`${gateway.url}/rt/once`);
    expect(await response.text()).toBe('ok after 1 calls, body ""');
    expect(backend.hits.get('/once')).toBe(1);
  });
});
