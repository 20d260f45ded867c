import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../helpers/backend.js';
import { type GatewayStack, startGateway } from '../../helpers/gateway.js';
import { apiYaml, policy } from '../policies/support.js';

/**
 * Issue 13 item 3: the engine chooses the operation (and so the policy) on the same normalised path it forwards.
 * A wildcard operation must not reach a denied operation through dot-segments, however they are spelled, and an
 * encoded slash reaches the backend as the client wrote it (never double-encoded).
 */
describe('path normalisation through Envoy', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('courses', backend.url, [
        ['open', 'GET', '/open/{*rest}'],
        ['course', 'GET', '/api/Course/{id}', 'deny.xml'],
      ])}\n`,
      {
        'deny.xml': policy({
          inbound: `
    <return-response>
      <set-status code="403" reason="Forbidden" />
      <set-body>denied by the course operation</set-body>
    </return-response>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  /** Sends the request line exactly as written: fetch (WHATWG URL) would resolve the dot-segments itself. */
  function rawGet(path: string): Promise<{ status: number; body: string; location?: string }> {
    const { hostname, port } = new URL(gateway.url);
    return new Promise((resolve, reject) => {
      const outgoing = request({ host: hostname, port, path, method: 'GET', agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            ...(response.headers.location ? { location: response.headers.location } : {}),
          }),
        );
        response.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
  }

  it('the denied operation answers for itself', async () => {
    const answer = await rawGet('/courses/api/Course/1');
    expect(answer.status).toBe(403);
    expect(answer.body).toBe('denied by the course operation');
  });

  it.each([
    '/courses/open/../api/Course/1',
    '/courses/open/%2e%2e/api/Course/1',
    '/courses/open/%2E%2E/api/Course/1',
    '/courses/open/.%2e/api/Course/1',
    '//courses/open/..//api/Course/1',
    '/courses/open/./../api/Course/1',
    '/courses/open/x/../../api/Course/1',
  ])('%s is the denied operation, never the course from the backend', async (path) => {
    const before = backend.received.length;
    const answer = await rawGet(path);
    expect(answer.status, answer.body).toBe(403);
    expect(answer.body).toBe('denied by the course operation');
    expect(backend.received.length).toBe(before);
  });

  it.each([
    '/courses/open/..%2fapi/Course/1',
    '/courses/open/..%2Fapi/Course/1',
    '/courses/open/%2e%2e%2fapi/Course/1',
    '/courses/open/..%5capi/Course/1',
  ])('%s (a dot-segment behind an encoded slash) is refused, never forwarded', async (path) => {
    const before = backend.received.length;
    const answer = await rawGet(path);
    expect(answer.status, answer.body).toBe(400);
    expect(backend.received.length).toBe(before);
  });

  it('a path that climbs above the API is not the API', async () => {
    const before = backend.received.length;
    const answer = await rawGet('/courses/../../courses/api/Course/1');
    expect([400, 403, 404]).toContain(answer.status);
    expect(backend.received.length).toBe(before);
  });

  it('an encoded slash reaches the backend as the client wrote it, not double-encoded', async () => {
    const answer = await rawGet('/courses/open/api%2fCourse/1');
    expect(answer.status, answer.body).toBe(200);
    expect(backend.received.at(-1)?.url).toBe('/open/api%2fCourse/1');
  });

  it('an encoded slash is data, not a separator: /api%2fCourse/1 is not the course operation', async () => {
    const before = backend.received.length;
    const answer = await rawGet('/courses/api%2fCourse/1');
    expect(answer.status, answer.body).toBe(404);
    expect(backend.received.length).toBe(before);
  });

  it('the wildcard forwards the normalised path it matched', async () => {
    const answer = await rawGet('/courses/open/a/./b/../c//d');
    expect(answer.status, answer.body).toBe(200);
    expect(backend.received.at(-1)?.url).toBe('/open/a/c/d');
  });
});
