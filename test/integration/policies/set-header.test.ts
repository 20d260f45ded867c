import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/** set-header on the request (inbound) and on the response (outbound), every exists-action, several values. */
describe('set-header through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend(() => ({
      headers: {
        'X-Backend': 'backend',
        'X-Backend-Keep': 'backend',
        'X-Backend-List': 'one',
        'X-Internal-Detail': 'secret',
      },
    }));
    gateway = await startGateway(
      `apis:\n${apiYaml('hdr', backend.url, [['get', 'GET', '/h', 'op.xml']])}\n`,
      {
        'op.xml': policy({
          inbound: `
    <set-header name="X-Mode" exists-action="override"><value>new</value></set-header>
    <set-header name="X-Keep" exists-action="skip"><value>gateway-default</value></set-header>
    <set-header name="X-List" exists-action="append"><value>b</value></set-header>
    <set-header name="X-Secret" exists-action="delete" />
    <set-header name="X-Several"><value>1</value><value>2</value></set-header>
    <set-header name="User-Agent"><value>agent/1 (a, b)</value><value>agent/2</value></set-header>
    <set-header name="Cookie"><value>a=1</value><value>b=2</value></set-header>
    <set-header name="@(&quot;X-From-&quot; + &quot;Expression&quot;)"><value>@(context.Request.Method)</value></set-header>`,
          outbound: `
    <set-header name="X-Backend" exists-action="override"><value>gateway</value></set-header>
    <set-header name="X-Backend-Keep" exists-action="skip"><value>gateway</value></set-header>
    <set-header name="X-Backend-List" exists-action="append"><value>two</value></set-header>
    <set-header name="X-Internal-Detail" exists-action="delete" />
    <set-header name="Set-Cookie"><value>a=1</value><value>b=2</value></set-header>
    <set-header name="WWW-Authenticate"><value>Bearer realm="a"</value><value>Basic realm="b"</value></set-header>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('changes the request the backend receives: override, skip, append, delete, several values', async () => {
    const response = await fetch(`${gateway.url}/hdr/h`, {
      headers: { 'X-Mode': 'old', 'X-Keep': 'client', 'X-List': 'a', 'X-Secret': 'hunter2' },
    });
    expect(response.status).toBe(200);
    const headers = backend.received.at(-1)!.headers;
    expect(headers['x-mode']).toBe('new');
    expect(headers['x-keep']).toBe('client');
    expect(headers['x-list']).toBe('a,b');
    expect(headers['x-secret']).toBeUndefined();
    expect(headers['x-several']).toBe('1,2');
    expect(headers['x-from-expression']).toBe('GET');
  });

  it('skip sets the header when the client did not send it; append creates it', async () => {
    await fetch(`${gateway.url}/hdr/h`);
    const headers = backend.received.at(-1)!.headers;
    expect(headers['x-keep']).toBe('gateway-default');
    expect(headers['x-list']).toBe('b');
    expect(headers['x-mode']).toBe('new');
  });

  it('changes the response the client receives', async () => {
    const response = await fetch(`${gateway.url}/hdr/h`);
    expect(response.headers.get('x-backend')).toBe('gateway');
    expect(response.headers.get('x-backend-keep')).toBe('backend');
    expect(response.headers.get('x-backend-list')).toBe('one,two');
    expect(response.headers.has('x-internal-detail')).toBe(false);
    // The body is the backend's, untouched.
    expect(((await response.json()) as { url: string }).url).toBe('/h');
  });

  it('sends one line per value for headers whose values may hold commas', async () => {
    const response = await fetch(`${gateway.url}/hdr/h`);
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="a", Basic realm="b"');
  });

  /** The backend's header lines named `name`, as it received them (repeated lines apart). */
  const lines = (name: string): string[] => {
    const raw = backend.received.at(-1)!.rawHeaders;
    return raw.filter((_, i) => i % 2 === 1 && raw[i - 1]!.toLowerCase() === name);
  };

  it('sends several values as set-header documents: one comma-joined line, one line each for Cookie and the like', async () => {
    await fetch(`${gateway.url}/hdr/h`);
    expect(lines('x-several')).toEqual(['1,2']);
    expect(lines('cookie')).toEqual(['a=1', 'b=2']);
    // Envoy holds User-Agent (and If-Modified-Since, If-Unmodified-Since; Date, Expires, Last-Modified on a
    // response) as one header and joins what is appended to it: a known difference (docs/differences.md).
    expect(lines('user-agent')).toEqual(['agent/1 (a, b),agent/2']);
  });

  it('forwards a header the client repeated as the documentation says multiple values go: one comma-joined line', async () => {
    // fetch joins repeated headers itself; node:http sends each value of an array as its own line.
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${gateway.url}/hdr/h`);
      const request = httpRequest(
        { host: url.hostname, port: url.port, path: url.pathname, headers: { 'X-Tag': ['a', 'b'] } },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        },
      );
      request.on('error', reject);
      request.end();
    });
    expect(status).toBe(200);
    expect(lines('x-tag')).toEqual(['a,b']);
  });
});
