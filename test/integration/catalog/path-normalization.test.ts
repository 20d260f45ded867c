import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * Issue 13 item 3: the engine chooses the operation (and so the policy) on the same normalised path it forwards.
 * A wildcard operation must not reach a denied operation through dot-segments, however they are spelled, and an
 * encoded slash reaches the backend as the client wrote it (never double-encoded).
 */
/** Envoy's HttpConnectionManager of the gateway listener in a generated bootstrap. */
function gatewayConnectionManager(bootstrap: Record<string, unknown>): Record<string, unknown> {
  const resources = bootstrap.static_resources as {
    listeners: { filter_chains: { filters: { name: string; typed_config: Record<string, unknown> }[] }[] }[];
  };
  const filter = resources.listeners[0]!.filter_chains[0]!.filters.find(
    (candidate) => candidate.name === 'envoy.filters.network.http_connection_manager',
  );
  return filter!.typed_config;
}

/** An Envoy configured elsewhere (plugin mode) that leaves the path as the client sent it: the engine alone. */
function withoutEnvoyNormalisation(bootstrap: Record<string, unknown>): Record<string, unknown> {
  const manager = gatewayConnectionManager(bootstrap);
  manager.normalize_path = false;
  manager.merge_slashes = false;
  delete manager.path_with_escaped_slashes_action;
  return bootstrap;
}

describe.each([
  // Envoy resolves every spelling first, so the denied operation's own policy answers.
  ['through Envoy as Portcullis configures it', (bootstrap: Record<string, unknown>) => bootstrap, [403]],
  // That Envoy routes `//courses/…` by its raw prefix, to its not-found route, before the engine sees it.
  ['behind an Envoy that does not normalise (the engine alone)', withoutEnvoyNormalisation, [403, 404]],
])('path normalisation %s', (_title, bootstrap, denials) => {
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
      {},
      bootstrap,
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
    '/courses/open\\..\\api/Course/1',
    '/courses/open/%2e%2E/api/Course/1',
  ])('%s is the denied operation, never the course from the backend', async (path) => {
    const before = backend.received.length;
    const answer = await rawGet(path);
    expect(denials, answer.body).toContain(answer.status);
    if (answer.status === 403) expect(answer.body).toBe('denied by the course operation');
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

  it('a dot-segment after an empty segment never reaches the denied operation', async () => {
    // Envoy resolves "open//.." to "open" (the ".." takes the empty segment), the engine merges slashes first and
    // resolves it to the API root: either way the path matched is the path forwarded.
    const answer = await rawGet('/courses/open//../api/Course/1');
    if (answer.status === 200) expect(backend.received.at(-1)?.url).toBe('/open/api/Course/1');
    else expect(answer.body).toBe('denied by the course operation');
  });

  it('a malformed percent-encoding is refused with 400, not an engine failure', async () => {
    const before = backend.received.length;
    const answer = await rawGet('/courses/open/%zz');
    expect(answer.status, answer.body).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ statusCode: 400 });
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

  it('a dot-segment with ";parameters" (which Servlet containers strip) is refused or resolved', async () => {
    const before = backend.received.length;
    const answer = await rawGet('/courses/open/..;x=1/api/Course/1');
    // Envoy's normalize_path resolves it as a dot-segment (the denied operation answers); the engine refuses it.
    expect([400, 403], answer.body).toContain(answer.status);
    expect(backend.received.length).toBe(before);
  });

  it('the wildcard forwards the normalised path it matched', async () => {
    const answer = await rawGet('/courses/open/a/./b/../c//d');
    expect(answer.status, answer.body).toBe(200);
    expect(backend.received.at(-1)?.url).toBe('/open/a/c/d');
  });
});
