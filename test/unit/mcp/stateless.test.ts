import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTokenKit,
  FakeCaller,
  ISSUER,
  MutableCatalog,
  type RunningApp,
  sampleOperations,
  send,
  sseMessages,
  startApp,
  type TokenKit,
  textOf,
} from '../../doubles/mcp.js';

/** The stateless 2026-07-28 revision (SEP-2575, SEP-2243, SEP-2549) on the endpoint, without Envoy. */

const V = '2026-07-28';
const SERVER_INFO = { name: 'portcullis', version: '0.1.0' };
const META = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
};

let kit: TokenKit;
let app: RunningApp;
let catalog: MutableCatalog;
let caller: FakeCaller;
let alice: string;

beforeAll(async () => {
  kit = await createTokenKit();
  catalog = new MutableCatalog(sampleOperations());
  caller = new FakeCaller();
  app = await startApp(() => ({
    issuer: ISSUER,
    verifier: kit.verifier,
    catalog,
    caller,
    serverInfo: SERVER_INFO,
    instructions: 'Course tools.',
    keepAliveMs: 0,
    notificationPollMs: 20,
  }));
  alice = await kit.sign({ sub: 'alice', client_id: 'c1', scope: 'read:courses-work', aud: app.url });
});
afterAll(() => app.close());

/** A request as a 2026-07-28 client sends it: version header, Mcp-Method (+ Mcp-Name), `_meta`. */
function modern(
  method: string,
  params: Record<string, unknown> = {},
  o: {
    id?: number;
    headers?: Record<string, string>;
    version?: string;
    accept?: string;
    to?: { url: string; token: string };
  } = {},
) {
  const name: Record<string, string> = typeof params.name === 'string' ? { 'mcp-name': params.name } : {};
  return send(
    o.to?.url ?? app.url,
    { jsonrpc: '2.0', id: o.id ?? 1, method, params: { _meta: META, ...params } },
    {
      token: o.to?.token ?? alice,
      version: o.version ?? V,
      accept: o.accept,
      headers: { 'mcp-method': method, ...name, ...o.headers },
    },
  );
}

async function reply(res: Response): Promise<[number, unknown]> {
  return [res.status, await res.json()];
}

const envelope = { resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO } };

describe('requests of the stateless revision', () => {
  it('server/discover names every revision served and the capabilities, cacheable by anyone', async () => {
    expect(await reply(await modern('server/discover', {}, { id: 7 }))).toEqual([
      200,
      {
        jsonrpc: '2.0',
        id: 7,
        result: {
          supportedVersions: ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', V],
          capabilities: { tools: { listChanged: true } },
          instructions: 'Course tools.',
          ttlMs: 300_000,
          cacheScope: 'public',
          ...envelope,
        },
      },
    ]);
  });

  it('tools/list carries the caching hints, private to the token, and no session is minted', async () => {
    const res = await modern('tools/list');
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const [status, body] = await reply(res);
    expect(status).toBe(200);
    expect(body).toMatchObject({ result: { ttlMs: 60_000, cacheScope: 'private', ...envelope } });
    expect((body as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name)).toEqual([
      'getCourse',
      'listCourses',
    ]);
  });

  it('tools/call goes through the gateway; a tool the token does not grant is 403 with the scope', async () => {
    const [status, body] = await reply(
      await modern('tools/call', { name: 'getCourse', arguments: { id: 1 } }),
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: 1, result: envelope });
    expect(caller.calls.at(-1)!.request.path).toBe('/api/Course/1');
    const refused = await modern('tools/call', { name: 'createCourse', arguments: { name: 'x' } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
  });

  it('answers in SSE to a client that accepts only text/event-stream', async () => {
    const res = await modern('tools/list', {}, { accept: 'text/event-stream' });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(sseMessages(await res.text())).toMatchObject([{ id: 1, result: { cacheScope: 'private' } }]);
  });
});

describe('what the stateless revision refuses', () => {
  it('_meta without the protocol version or the client capabilities: 400 -32602 with the request id', async () => {
    const res = await send(
      app.url,
      { jsonrpc: '2.0', id: 101, method: 'server/discover', params: {} },
      { token: alice, version: V, headers: { 'mcp-method': 'server/discover' } },
    );
    expect(await reply(res)).toEqual([
      400,
      {
        jsonrpc: '2.0',
        id: 101,
        error: {
          code: -32602,
          message:
            'Invalid params: params._meta must carry io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities',
        },
      },
    ]);
  });

  it('a header version other than the _meta one: 400 -32020', async () => {
    const res = await modern('server/discover', {
      _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' },
    });
    expect(await reply(res)).toEqual([
      400,
      {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32020,
          message:
            "Header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match _meta value 'v999.0.0'",
        },
      },
    ]);
  });

  it('an unknown version in both: 400 -32022 naming the revisions served and echoing the one asked for', async () => {
    const res = await modern(
      'server/discover',
      { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } },
      { id: 301, version: 'v999.0.0' },
    );
    expect(await reply(res)).toEqual([
      400,
      {
        jsonrpc: '2.0',
        id: 301,
        error: {
          code: -32022,
          message: 'Unsupported protocol version',
          data: {
            supported: ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', V],
            requested: 'v999.0.0',
          },
        },
      },
    ]);
  });

  it('Mcp-Method missing, different or differently cased: 400 -32020; surrounding whitespace is fine', async () => {
    const cases: [Record<string, string>, number, string?][] = [
      [{ 'mcp-method': '' }, 400, "Mcp-Method header value '' does not match body value 'tools/list'"],
      [
        { 'mcp-method': 'prompts/list' },
        400,
        "Mcp-Method header value 'prompts/list' does not match body value 'tools/list'",
      ],
      [
        { 'mcp-method': 'TOOLS/LIST' },
        400,
        "Mcp-Method header value 'TOOLS/LIST' does not match body value 'tools/list'",
      ],
      [{ 'mcp-method': '  tools/list  ' }, 200],
    ];
    for (const [headers, status, message] of cases) {
      const [got, body] = await reply(await modern('tools/list', {}, { headers }));
      expect([got, (body as { error?: { code: number; message: string } }).error]).toEqual([
        status,
        message ? { code: -32020, message: `Header mismatch: ${message}` } : undefined,
      ]);
    }
    const missing = await send(
      app.url,
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: META } },
      { token: alice, version: V },
    );
    expect(await reply(missing)).toEqual([
      400,
      {
        jsonrpc: '2.0',
        id: 3,
        error: { code: -32020, message: 'Header mismatch: the Mcp-Method header is required' },
      },
    ]);
  });

  it('Mcp-Name must match params.name, after Base64 sentinel decoding', async () => {
    const call = (mcpName?: string) =>
      send(
        app.url,
        {
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params: { _meta: META, name: 'listCourses', arguments: {} },
        },
        {
          token: alice,
          version: V,
          headers: { 'mcp-method': 'tools/call', ...(mcpName === undefined ? {} : { 'mcp-name': mcpName }) },
        },
      );
    const encoded = `=?base64?${Buffer.from('listCourses').toString('base64')}?=`;
    expect((await call(encoded)).status).toBe(200);
    expect((await call(' listCourses ')).status).toBe(200);
    for (const [header, message] of [
      [undefined, 'the Mcp-Name header is required for tools/call'],
      ['getCourse', "Mcp-Name header value 'getCourse' does not match body value 'listCourses'"],
      ['=?base64?SGVsbG8?=', 'the Mcp-Name header holds invalid Base64'],
    ] as const) {
      expect(await reply(await call(header))).toEqual([
        400,
        { jsonrpc: '2.0', id: 9, error: { code: -32020, message: `Header mismatch: ${message}` } },
      ]);
    }
  });

  it('methods of the session era and unknown ones: 404 -32601 with the request id', async () => {
    for (const method of [
      'initialize',
      'ping',
      'logging/setLevel',
      'resources/subscribe',
      'unknown/method',
    ]) {
      expect(await reply(await modern(method, {}, { id: 500 }))).toEqual([
        404,
        { jsonrpc: '2.0', id: 500, error: { code: -32601, message: `Method not found: ${method}` } },
      ]);
    }
  });

  it('GET and DELETE are 405: there is no session stream to open or end', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await send(app.url, undefined, {
        token: alice,
        version: V,
        method,
        accept: 'text/event-stream',
      });
      expect([res.status, res.headers.get('allow')]).toEqual([405, 'POST']);
    }
  });
});

describe('Mcp-Param-* headers of x-mcp-header arguments (SEP-2243)', () => {
  let mirroring: RunningApp;
  let token: string;
  beforeAll(async () => {
    const none = { templateParameters: [], queryParameters: [], requestBodySchema: undefined };
    mirroring = await startApp(() => ({
      issuer: ISSUER,
      verifier: kit.verifier,
      catalog: new MutableCatalog([
        {
          apiId: 'jobs',
          apiName: 'Jobs',
          productIds: ['jobs'],
          operationId: 'runJob',
          method: 'POST',
          urlTemplate: '/jobs',
          ...none,
          headerParameters: [
            { name: 'X-Region', required: false },
            { name: 'X-Priority', required: false, schema: { type: 'integer' } },
            { name: 'X-Dry-Run', required: false, schema: { type: 'boolean' } },
          ],
        },
      ]),
      caller: new FakeCaller(),
      serverInfo: SERVER_INFO,
    }));
    token = await kit.sign({ sub: 'alice', client_id: 'c1', scope: 'write:jobs-work', aud: mirroring.url });
  });
  afterAll(() => mirroring.close());

  const call = (args: Record<string, unknown>, headers: Record<string, string>) =>
    modern(
      'tools/call',
      { name: 'runJob', arguments: args },
      { id: 11, headers, to: { url: mirroring.url, token } },
    );
  const mismatch = (message: string) => [
    400,
    { jsonrpc: '2.0', id: 11, error: { code: -32020, message: `Header mismatch: ${message}` } },
  ];

  it('accepts headers that say what the body says: decoded Base64, integers as numbers, lowercase booleans', async () => {
    for (const [args, headers] of [
      [{}, {}],
      [{ 'X-Region': null }, {}],
      [{ 'X-Region': 'us-west1' }, { 'mcp-param-x-region': 'us-west1' }],
      [{ 'X-Region': 'us-west1' }, { 'MCP-PARAM-X-REGION': '  us-west1 ' }],
      [{ 'X-Region': ' padded ' }, { 'Mcp-Param-X-Region': '=?base64?IHBhZGRlZCA=?=' }],
      [{ 'X-Region': 'Hello, 世界' }, { 'Mcp-Param-X-Region': '=?base64?SGVsbG8sIOS4lueVjA==?=' }],
      [{ 'X-Region': '=?base64?SGVsbG8=' }, { 'Mcp-Param-X-Region': '=?base64?SGVsbG8=' }],
      [{ 'X-Priority': 42 }, { 'Mcp-Param-X-Priority': '42' }],
      [{ 'X-Priority': 42 }, { 'Mcp-Param-X-Priority': '42.0' }],
      [{ 'X-Priority': -7 }, { 'Mcp-Param-X-Priority': '-7' }],
      [{ 'X-Dry-Run': false }, { 'Mcp-Param-X-Dry-Run': 'false' }],
    ] as const) {
      const res = await call(args, headers);
      expect([res.status, JSON.stringify(args), JSON.stringify(headers)]).toEqual([
        200,
        JSON.stringify(args),
        JSON.stringify(headers),
      ]);
      expect(await res.json()).toMatchObject({ id: 11, result: { resultType: 'complete' } });
    }
  });

  it('refuses a missing, extra, undecodable or different header with 400 and -32020', async () => {
    for (const [args, headers, message] of [
      [
        { 'X-Region': 'us-west1' },
        {},
        'the Mcp-Param-X-Region header is required: argument "X-Region" is in the body',
      ],
      [
        {},
        { 'mcp-param-x-region': 'us-west1' },
        'Mcp-Param-X-Region header is sent but argument "X-Region" is not in the body',
      ],
      [
        { 'X-Region': 'us-west1' },
        { 'mcp-param-x-region': 'eu-west1' },
        "Mcp-Param-X-Region header value 'eu-west1' does not match body value 'us-west1'",
      ],
      [
        { 'X-Region': 'Hello' },
        { 'mcp-param-x-region': '=?base64?SGVsbG8?=' },
        'the Mcp-Param-X-Region header holds invalid Base64',
      ],
      [
        { 'X-Region': 'Hello' },
        { 'mcp-param-x-region': '=?base64?SGVs!!!bG8=?=' },
        'the Mcp-Param-X-Region header holds invalid Base64',
      ],
      [
        { 'X-Region': 'SGVsbG8=' },
        { 'mcp-param-x-region': '=?base64?SGVsbG8=?=' },
        "Mcp-Param-X-Region header value '=?base64?SGVsbG8=?=' does not match body value 'SGVsbG8='",
      ],
      [
        { 'X-Priority': 42 },
        { 'mcp-param-x-priority': '43' },
        "Mcp-Param-X-Priority header value '43' does not match body value '42'",
      ],
      [
        { 'X-Priority': 42 },
        { 'mcp-param-x-priority': '0x2a' },
        "Mcp-Param-X-Priority header value '0x2a' does not match body value '42'",
      ],
      [
        { 'X-Dry-Run': true },
        { 'mcp-param-x-dry-run': 'TRUE' },
        "Mcp-Param-X-Dry-Run header value 'TRUE' does not match body value 'true'",
      ],
    ] as const) {
      expect(await reply(await call(args, headers))).toEqual(mismatch(message));
    }
  });

  it('refuses a header value with characters RFC 9110 does not allow unencoded', async () => {
    // fetch refuses to send such a value: node:http writes it as latin1 bytes.
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 11,
      method: 'tools/call',
      params: { _meta: META, name: 'runJob', arguments: { 'X-Region': 'café' } },
    });
    const target = new URL(mirroring.url);
    const answer = await new Promise<[number, unknown]>((resolve, reject) => {
      const sent = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json',
            'mcp-protocol-version': V,
            'mcp-method': 'tools/call',
            'mcp-name': 'runJob',
            'mcp-param-x-region': Buffer.from('café', 'utf8').toString('latin1'),
          },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk) => {
            text += chunk;
          });
          response.on('end', () => resolve([response.statusCode ?? 0, JSON.parse(text)]));
        },
      );
      sent.on('error', reject);
      sent.end(body);
    });
    expect(answer).toEqual(
      mismatch('the Mcp-Param-X-Region header holds characters that must be Base64-encoded'),
    );
  });
});

describe('subscriptions/listen', () => {
  it('opens with the acknowledgement, then carries tools/list_changed tagged with the subscription id', async () => {
    const res = await modern(
      'subscriptions/listen',
      { notifications: { toolsListChanged: true } },
      { id: 42 },
    );
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
    const stream = textOf(res);
    const tag = { 'io.modelcontextprotocol/subscriptionId': 42 };
    expect(sseMessages(await stream.until(/acknowledged.*\n\n/))).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { toolsListChanged: true }, _meta: tag },
      },
    ]);
    catalog.set(sampleOperations().slice(1));
    expect(sseMessages(await stream.until(/list_changed.*\n\n/)).at(-1)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: tag },
    });
    catalog.set(sampleOperations());
    await stream.cancel();
  });

  it('sends only what was asked for, acknowledges only what exists, and ends with a result at shutdown', async () => {
    const own = new MutableCatalog(sampleOperations());
    const server = await startApp(() => ({
      issuer: ISSUER,
      verifier: kit.verifier,
      catalog: own,
      caller,
      serverInfo: SERVER_INFO,
      keepAliveMs: 0,
    }));
    const to = {
      url: server.url,
      token: await kit.sign({ sub: 'alice', client_id: 'c1', scope: 'read:courses-work', aud: server.url }),
    };
    try {
      const tools = textOf(
        await modern('subscriptions/listen', { notifications: { toolsListChanged: true } }, { id: 1, to }),
      );
      const prompts = textOf(
        await modern('subscriptions/listen', { notifications: { promptsListChanged: true } }, { id: 2, to }),
      );
      await tools.until(/acknowledged/);
      await prompts.until(/acknowledged/);
      own.set(sampleOperations().slice(2));
      await tools.until(/list_changed/);
      // Shutdown ends each listen stream with its result (SubscriptionsListenResult), after anything sent on it.
      await server.endpoint.close();
      const tag = { 'io.modelcontextprotocol/subscriptionId': 2 };
      expect(sseMessages(await prompts.until(/"result".*\n\n/))).toEqual([
        {
          jsonrpc: '2.0',
          method: 'notifications/subscriptions/acknowledged',
          params: { notifications: {}, _meta: tag },
        },
        {
          jsonrpc: '2.0',
          id: 2,
          result: {
            resultType: 'complete',
            _meta: { ...tag, 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
          },
        },
      ]);
      await tools.cancel();
      await prompts.cancel();
    } finally {
      await server.close();
    }
  });

  it('without a notifications object: 400 -32602', async () => {
    expect(await reply(await modern('subscriptions/listen', {}, { id: 5 }))).toEqual([
      400,
      {
        jsonrpc: '2.0',
        id: 5,
        error: {
          code: -32602,
          message: 'Invalid params: subscriptions/listen needs a "notifications" object',
        },
      },
    ]);
  });
});
