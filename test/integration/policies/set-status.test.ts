import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** set-status in outbound changes the status the client sees and keeps the backend's body. */
describe('set-status through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend((request) =>
      request.url === '/missing' ? { status: 404, body: 'nothing here' } : { body: 'found' },
    );
    gateway = await startGateway(
      `apis:\n${apiYaml('st', backend.url, [
        ['created', 'GET', '/created', 'created.xml'],
        ['missing', 'GET', '/missing', 'missing.xml'],
        ['teapot', 'GET', '/teapot', 'teapot.xml'],
        ['reason', 'GET', '/reason', 'reason.xml'],
      ])}\n`,
      {
        'created.xml': policy({ outbound: '<set-status code="201" reason="Created" />' }),
        'missing.xml': policy({
          outbound: `<choose><when condition="@(context.Response.StatusCode == 404)">
            <set-status code="@(410)" reason="Gone" /></when></choose>`,
        }),
        // The policy's reason, as later statements read it, is echoed in a header: the status line cannot carry it.
        'teapot.xml': policy({
          outbound: `<set-status code="418" reason="Brewing, not serving" />
            <set-header name="X-Status-Reason" exists-action="override">
              <value>@(context.Response.StatusReason)</value>
            </set-header>`,
        }),
        'reason.xml': policy({
          inbound: '<return-response><set-status code="200" reason="All good here" /></return-response>',
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('replaces the status and keeps the body', async () => {
    const response = await fetch(`${gateway.url}/st/created`);
    expect(response.status).toBe(201);
    expect(await response.text()).toBe('found');
  });

  it('takes the code from an expression, depending on the backend status', async () => {
    const response = await fetch(`${gateway.url}/st/missing`);
    expect(response.status).toBe(410);
    expect(await response.text()).toBe('nothing here');
  });

  /**
   * set-status's `reason` (learn.microsoft.com/azure/api-management/set-status-policy) reaches the policies that run
   * after it, but not the client's status line: Envoy's HTTP/1.1 codec writes its own phrase for the code
   * (envoyproxy/envoy#9559: the reason phrase is not proxied) and ext_proc's ImmediateResponse and header mutations
   * carry only the code. The policy reference says so under set-status.
   */
  it("keeps the policy reason for context.Response.StatusReason; the status line has Envoy's phrase", async () => {
    const response = await statusLine(`${gateway.url}/st/teapot`);
    expect(response.status).toBe(418);
    expect(response.headers['x-status-reason']).toBe('Brewing, not serving');
    expect(response.reason).toBe('Unknown');
  });

  it('a return-response reason likewise: the status line says OK', async () => {
    const response = await statusLine(`${gateway.url}/st/reason`);
    expect(response.status).toBe(200);
    expect(response.reason).toBe('OK');
  });
});

/** The HTTP/1.1 status line and headers as the client received them (fetch does not promise statusText). */
function statusLine(
  url: string,
): Promise<{ status: number; reason: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    get(url, (response) => {
      response.resume();
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          reason: response.statusMessage ?? '',
          headers: response.headers,
        }),
      );
    }).on('error', reject);
  });
}
