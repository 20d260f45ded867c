import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discover, register, startServer, type TestServer } from '../../processes/auth-server.js';

/**
 * The route table (src/auth/routes.ts) as clients see it: exact paths from the configured URLs, 405 with Allow for
 * a method a path does not take, preflights only on client endpoints, everything else left to the next middleware.
 * The issuer's path has characters a path pattern would read as syntax.
 */
describe('authorization server routes', () => {
  let server: TestServer;
  let auth: string;

  beforeAll(async () => {
    server = await startServer({}, { issuerPath: '/t(1)' });
    auth = `${server.url}/t(1)`;
  });
  afterAll(() => server.close());

  const send = (url: string, method: string, headers: Record<string, string> = {}) =>
    fetch(url, { method, headers, redirect: 'manual' });

  it('routes a path exactly as configured, special characters included', async () => {
    expect((await send(`${server.url}/.well-known/oauth-authorization-server/t(1)`, 'GET')).status).toBe(200);
    expect((await send(`${auth}/v1/jwks`, 'GET')).status).toBe(200);
    expect((await send(`${auth}/v1/jwks`, 'HEAD')).status).toBe(200);
  });

  it('leaves another spelling of a path to the next middleware: trailing slash, other case, escaped', async () => {
    for (const url of [
      `${auth}/v1/token/`,
      `${server.url}/T(1)/v1/TOKEN`,
      `${server.url}/t%281%29/v1/token`,
      `${server.url}/v1/authorize/`,
      `${server.url}/v1/token`,
    ]) {
      expect((await send(url, 'POST')).status, url).toBe(404);
    }
  });

  it('answers a method a path does not take with 405, Allow and a JSON error, without CORS headers', async () => {
    const cases: [string, string, string][] = [
      [`${auth}/v1/token`, 'GET', 'POST'],
      [`${auth}/v1/jwks`, 'POST', 'GET'],
      [`${auth}/v1/register/some-client`, 'POST', 'GET, PUT, DELETE'],
      [`${server.url}/v1/authorize`, 'OPTIONS', 'GET'],
      [`${server.url}/v1/authorize/consent`, 'PATCH', 'GET, POST'],
    ];
    for (const [url, method, allow] of cases) {
      const response = await send(url, method, { Origin: 'https://app.example' });
      expect(response.status, `${method} ${url}`).toBe(405);
      expect(response.headers.get('allow')).toBe(allow);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(await response.json()).toMatchObject({ error: 'invalid_request' });
    }
  });

  it('answers preflights on client endpoints with the methods of the path', async () => {
    for (const [url, methods] of [
      [`${auth}/v1/token`, 'POST'],
      [`${auth}/v1/register/some-client`, 'GET, PUT, DELETE'],
      [`${server.url}/.well-known/oauth-authorization-server`, 'GET'],
    ] as const) {
      const response = await send(url, 'OPTIONS', { Origin: 'https://app.example' });
      expect(response.status, url).toBe(204);
      expect(response.headers.get('access-control-allow-methods')).toBe(methods);
    }
  });

  it('gives client endpoints no-store, the metadata and JWKS a short public cache, and errors no-store', async () => {
    const token = await send(`${auth}/v1/token`, 'POST', {
      'Content-Type': 'application/x-www-form-urlencoded',
    });
    expect(token.status).toBe(400);
    expect(token.headers.get('cache-control')).toBe('no-store');
    expect(token.headers.get('pragma')).toBe('no-cache');
    const jwks = await send(`${auth}/v1/jwks`, 'GET');
    expect(jwks.headers.get('cache-control')).toBe('public, max-age=300');
    expect(jwks.headers.get('pragma')).toBeNull();
  });

  it('refuses a registration URL whose client id is not valid percent-encoding like an unknown client (401, not 500)', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const response = await send(`${auth}/v1/register/%zz`, method, { Authorization: 'Bearer abc' });
      expect(response.status, method).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    }
  });

  it('reads a registration with HEAD like GET (RFC 9110 §9.3.2), and HEAD changes nothing', async () => {
    const created = await register(await discover(server), 'client_secret_basic');
    const uri = created.registration.registration_client_uri as string;
    const authorization = { Authorization: `Bearer ${created.registration.registration_access_token}` };
    const head = await send(uri, 'HEAD', authorization);
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect((await send(uri, 'GET', authorization)).status).toBe(200);
  });
});
