import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolOperation } from '../../../src/mcp/index.js';
import { apiAudience, createGatewayCaller } from '../../../src/service/gateway-caller.js';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';

/** The echo backend stands in for Envoy's gateway listener: the caller's HTTP request is what it records. */
let gateway: EchoBackend;
const minted: { subject: string; audience: string; scope: string[]; ttlSeconds?: number }[] = [];

beforeAll(async () => {
  gateway = await startEchoBackend((request) => {
    if (request.url.startsWith('/courses/api/big')) return { body: 'x'.repeat(2048) };
    if (request.url.startsWith('/courses/api/missing'))
      return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'nope' };
    return undefined;
  });
});
afterAll(() => gateway.close());

function operation(overrides: Partial<ToolOperation> = {}): ToolOperation {
  return {
    apiId: 'courses',
    apiName: 'Course API',
    productIds: ['courses', 'teaching'],
    method: 'GET',
    urlTemplate: '/api/Course/{id}',
    templateParameters: [],
    queryParameters: [],
    headerParameters: [],
    ...overrides,
  };
}

function caller(options: { maxResponseBytes?: number; audienceBase?: string } = {}) {
  return createGatewayCaller({
    gatewayUrl: gateway.url,
    apis: [
      { id: 'courses', urlSuffix: 'courses' },
      { id: 'hosted', urlSuffix: 'v1/hosted', hostnames: ['api.example.org'] },
    ],
    mint: async (input) => {
      minted.push(input);
      return `service-token-${minted.length}`;
    },
    tokenTtlSeconds: 45,
    ...options,
  });
}

const subject = {
  sub: 'alice',
  clientId: 'c1',
  scopes: ['read:courses-work', 'write:teaching-work', 'read:other-work'],
};

describe('createGatewayCaller', () => {
  it('sends the call to /<urlSuffix><path> on the gateway with a minted token, never the user token', async () => {
    const response = await caller().call(
      operation(),
      {
        path: '/api/Course/7?verbose=true',
        templateParameters: { id: '7' },
        query: { verbose: 'true' },
        headers: { 'X-Trace': 't1', Authorization: 'Bearer user-token' },
      },
      subject,
    );
    expect(response.status).toBe(200);
    expect(response.contentType).toBe('application/json');
    const seen = gateway.received.at(-1)!;
    expect(seen.method).toBe('GET');
    expect(seen.url).toBe('/courses/api/Course/7?verbose=true');
    expect(seen.headers.authorization).toBe(`Bearer service-token-${minted.length}`);
    expect(seen.headers['x-trace']).toBe('t1');
    expect(seen.headers.host).toBe(new URL(gateway.url).host);
    // Audience: the API's gateway URL; scope: only the user's scopes that grant this (read) operation.
    expect(minted.at(-1)).toEqual({
      subject: 'alice',
      audience: `${gateway.url}/courses`,
      scope: ['read:courses-work'],
      ttlSeconds: 45,
    });
    expect(JSON.parse(response.body.toString()).url).toBe(seen.url);
  });

  it('sends a JSON body with its length, and write scopes for an unsafe method', async () => {
    await caller({ audienceBase: 'https://gateway.example.com/' }).call(
      operation({ method: 'POST', urlTemplate: '/api/Course' }),
      {
        path: '/api/Course',
        templateParameters: {},
        query: {},
        headers: {},
        body: { title: 'T', credits: 1 },
      },
      subject,
    );
    const seen = gateway.received.at(-1)!;
    expect(seen.method).toBe('POST');
    expect(seen.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen.body)).toEqual({ title: 'T', credits: 1 });
    expect(minted.at(-1)).toMatchObject({
      audience: 'https://gateway.example.com/courses',
      scope: ['write:teaching-work'],
    });
  });

  it('sets the Host of an API bound to host names so Envoy picks its virtual host', async () => {
    await caller().call(
      operation({ apiId: 'hosted', urlTemplate: '/x' }),
      { path: '/x', templateParameters: {}, query: {}, headers: {} },
      subject,
    );
    const seen = gateway.received.at(-1)!;
    expect(seen.url).toBe('/v1/hosted/x');
    expect(seen.headers.host).toBe('api.example.org');
  });

  it('returns 4xx answers as they are, and refuses an answer over the size limit', async () => {
    const missing = await caller().call(
      operation(),
      { path: '/api/missing', templateParameters: {}, query: {}, headers: {} },
      subject,
    );
    expect(missing).toMatchObject({ status: 404, contentType: 'text/plain' });
    expect(missing.body.toString()).toBe('nope');
    await expect(
      caller({ maxResponseBytes: 1024 }).call(
        operation(),
        { path: '/api/big', templateParameters: {}, query: {}, headers: {} },
        subject,
      ),
    ).rejects.toThrow('the gateway answer is larger than 1024 bytes');
  });

  it('refuses an operation of an API it does not know, and a gateway URL with a path', async () => {
    await expect(
      caller().call(
        operation({ apiId: 'nope' }),
        { path: '/', templateParameters: {}, query: {}, headers: {} },
        subject,
      ),
    ).rejects.toThrow('gateway caller: no API "nope" in the configuration');
    expect(() =>
      createGatewayCaller({ gatewayUrl: 'http://127.0.0.1:1/base', apis: [], mint: async () => '' }),
    ).toThrow(TypeError);
    expect(apiAudience('https://gw.example.com/', 'v1/courses')).toBe('https://gw.example.com/v1/courses');
  });

  it('follows replaced APIs: a new one is reached with its audience, a removed one is refused', async () => {
    const reloaded = caller();
    const request = { path: '/labs', templateParameters: {}, query: {}, headers: {} };
    const labs = operation({ apiId: 'labs', productIds: ['labs'], urlTemplate: '/labs' });
    await expect(reloaded.call(labs, request, subject)).rejects.toThrow('no API "labs"');
    reloaded.replaceApis([{ id: 'labs', urlSuffix: 'v2/labs' }]);
    const response = await reloaded.call(labs, request, { ...subject, scopes: ['read:labs-work'] });
    expect(response.status).toBe(200);
    expect(gateway.received.at(-1)!.url).toBe('/v2/labs/labs');
    expect(minted.at(-1)).toMatchObject({ audience: `${gateway.url}/v2/labs`, scope: ['read:labs-work'] });
    await expect(reloaded.call(operation(), { ...request, path: '/api/Course/1' }, subject)).rejects.toThrow(
      'gateway caller: no API "courses" in the configuration',
    );
  });

  it('gives up on a gateway that does not answer in time', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const slow = createGatewayCaller({
      gatewayUrl: `http://127.0.0.1:${port}`,
      apis: [{ id: 'courses', urlSuffix: 'courses' }],
      mint: async () => 'token',
      timeoutMs: 200,
    });
    await expect(
      slow.call(
        operation(),
        { path: '/api/Course/1', templateParameters: {}, query: {}, headers: {} },
        subject,
      ),
    ).rejects.toThrow('no complete gateway answer within 200 ms');
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });
});

describe('createGatewayCaller: versions that share a URL suffix', () => {
  it('names the version of the tool’s API in the set’s header or query parameter, and none for the Original', async () => {
    const call = createGatewayCaller({
      gatewayUrl: gateway.url,
      apis: [
        {
          id: 'orders-v2',
          urlSuffix: 'orders',
          versionSelector: { by: 'header', key: 'Api-Version', name: 'v2' },
        },
        {
          id: 'orders',
          urlSuffix: 'orders',
          versionSelector: { by: 'header', key: 'Api-Version', name: '' },
        },
        {
          id: 'stock',
          urlSuffix: 'stock',
          versionSelector: { by: 'query', key: 'api-version', name: '2025-01-01' },
        },
      ],
      mint: async () => 'service-token',
    });
    const send = (apiId: string, path: string, headers: Record<string, string> = {}) =>
      call.call(
        operation({ apiId, urlTemplate: '/items' }),
        { path, templateParameters: {}, query: {}, headers },
        subject,
      );
    await send('orders-v2', '/items', { 'api-version': 'v9' });
    expect(gateway.received.at(-1)!).toMatchObject({
      url: '/orders/items',
      headers: { 'api-version': 'v2' },
    });
    await send('orders', '/items', { 'Api-Version': 'v2' });
    expect(gateway.received.at(-1)!.headers['api-version']).toBeUndefined();
    await send('stock', '/items?q=a%20b&api-version=1999-01-01');
    expect(gateway.received.at(-1)!.url).toBe('/stock/items?q=a%20b&api-version=2025-01-01');
  });
});
