import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedBackend, startScriptedBackend } from '../../doubles/scripted-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** forward-request: timeout (→ on-error with reason Timeout), follow-redirects, fail-on-error-status-code. */
describe('forward-request through Envoy', () => {
  let backend: ScriptedBackend;
  let gateway: GatewayStack;
  const reason = `<set-header name="X-Reason" exists-action="override"><value>@(context.LastError.Reason + "/" + context.LastError.Source + "/" + context.LastError.Section)</value></set-header>`;

  beforeAll(async () => {
    backend = await startScriptedBackend((request, response) => {
      const path = (request.url ?? '').split('?')[0];
      if (path === '/slow') {
        setTimeout(() => response.end('late'), 1500);
      } else if (path === '/moved') {
        response.writeHead(302, { location: '/target?from=moved' }).end();
      } else if (path === '/unavailable') {
        response.writeHead(503, { 'content-type': 'text/plain' }).end('backend details');
      } else {
        response.writeHead(200, { 'content-type': 'text/plain' }).end(`${request.method} ${request.url}`);
      }
    });
    const ops: [string, string, string, string][] = [
      ['slow', 'GET', '/slow', 'timeout.xml'],
      ['slow-default', 'GET', '/slow-ok', 'timeout-ok.xml'],
      ['moved', 'GET', '/moved', 'follow.xml'],
      ['moved-plain', 'GET', '/moved-plain', 'no-follow.xml'],
      ['unavailable', 'GET', '/unavailable', 'fail-on-error.xml'],
    ];
    gateway = await startGateway(`apis:\n${apiYaml('fw', backend.url, ops)}\n`, {
      'timeout.xml': policy({ backend: '<forward-request timeout-ms="300" />', onError: reason }, [
        'backend',
      ]),
      'timeout-ok.xml': policy(
        {
          inbound: '<rewrite-uri template="/slow" />',
          backend: '<forward-request timeout="5" />',
        },
        ['backend'],
      ),
      'follow.xml': policy({ backend: '<forward-request follow-redirects="true" />' }, ['backend']),
      'no-follow.xml': policy(
        { inbound: '<rewrite-uri template="/moved" />', backend: '<forward-request />' },
        ['backend'],
      ),
      'fail-on-error.xml': policy(
        { backend: '<forward-request fail-on-error-status-code="true" />', onError: reason },
        ['backend'],
      ),
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('a backend slower than the timeout goes to on-error with reason Timeout (504 by default)', async () => {
    const started = Date.now();
    const response = await fetch(`${gateway.url}/fw/slow`);
    expect(Date.now() - started).toBeLessThan(1400);
    expect(response.status).toBe(504);
    expect(response.headers.get('x-reason')).toBe('Timeout/forward-request/backend');
    expect(await response.json()).toEqual({ statusCode: 504, message: 'Internal server error' });
  });

  it('a longer timeout waits for the backend', async () => {
    const response = await fetch(`${gateway.url}/fw/slow-ok`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('late');
  });

  it('follow-redirects="true": the client gets the redirect target', async () => {
    const response = await fetch(`${gateway.url}/fw/moved`, { redirect: 'manual' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('GET /target?from=moved');
    expect(backend.hits.get('/target')).toBeGreaterThanOrEqual(1);
  });

  it('by default the redirect is passed to the client', async () => {
    const response = await fetch(`${gateway.url}/fw/moved-plain`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/target?from=moved');
  });

  it('fail-on-error-status-code="true": a 5xx goes to on-error, the backend body stays hidden', async () => {
    const response = await fetch(`${gateway.url}/fw/unavailable`);
    expect(response.status).toBe(503);
    expect(response.headers.get('x-reason')).toMatch(/\/forward-request\/backend$/);
    expect(await response.text()).not.toContain('backend details');
  });
});
