import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTokenKit,
  FakeCaller,
  ISSUER,
  initializeMessage,
  MutableCatalog,
  openSession,
  type RunningApp,
  sampleOperations,
  send,
  sseMessages,
  startApp,
  type TokenKit,
  textOf,
} from '../../doubles/mcp.js';
import { until } from '../../processes/wait.js';

let kit: TokenKit;
let app: RunningApp;
let catalog: MutableCatalog;
let alice: string;

beforeAll(async () => {
  kit = await createTokenKit();
  catalog = new MutableCatalog(sampleOperations());
  app = await startApp(() => ({
    issuer: ISSUER,
    verifier: kit.verifier,
    catalog,
    caller: new FakeCaller(),
    serverInfo: { name: 'portcullis', version: '0.1.0' },
    maxBodyBytes: 10_000,
    keepAliveMs: 0,
  }));
  alice = await kit.sign({ sub: 'alice', client_id: 'c1', scope: 'read:courses-work', aud: app.url });
});
afterAll(() => app.close());

const ping = (id: number | string = 2) => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('initialize', () => {
  it('returns JSON with a fresh Mcp-Session-Id', async () => {
    const res = await send(app.url, initializeMessage('2025-06-18'), { token: alice });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const session = res.headers.get('mcp-session-id')!;
    expect(session).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        protocolVersion: '2025-06-18',
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: 'portcullis', version: '0.1.0' },
      },
    });
    const again = await send(app.url, initializeMessage('2025-06-18'), { token: alice });
    expect(again.headers.get('mcp-session-id')).not.toBe(session);
  });

  it('is never refused for its MCP-Protocol-Version header', async () => {
    for (const version of ['2024-11-05', 'garbage']) {
      const res = await send(app.url, initializeMessage('2025-11-25'), { token: alice, version });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(
        '2025-11-25',
      );
    }
  });

  it('answers in SSE to a client that accepts only text/event-stream', async () => {
    const res = await send(app.url, initializeMessage(), { token: alice, accept: 'text/event-stream' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(res.headers.get('mcp-session-id')).toBeTruthy();
    expect(sseMessages(await res.text())).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        result: expect.objectContaining({ protocolVersion: '2025-11-25' }),
      },
    ]);
  });

  it('is lenient about Accept: none, only JSON, or */* get JSON', async () => {
    for (const accept of [null, 'application/json', '*/*']) {
      const res = await send(app.url, initializeMessage(), { token: alice, accept });
      expect([res.status, res.headers.get('content-type')]).toEqual([200, 'application/json']);
    }
  });

  it('an Accept with neither type is 406', async () => {
    const res = await send(app.url, initializeMessage(), { token: alice, accept: 'text/html' });
    expect(res.status).toBe(406);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Not Acceptable: accept application/json or text/event-stream' },
    });
  });

  it('must not be batched', async () => {
    const res = await send(app.url, [initializeMessage()], { token: alice });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: initialize must not be part of a batch' },
    });
  });
});

describe('requests in a session', () => {
  it('notifications get 202 with no body', async () => {
    const init = await send(app.url, initializeMessage(), { token: alice });
    const session = init.headers.get('mcp-session-id')!;
    const res = await send(
      app.url,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { token: alice, session },
    );
    expect(res.status).toBe(202);
    expect(res.headers.get('content-type')).toBeNull();
    expect(await res.text()).toBe('');
  });

  it('a client response (to nothing we asked) is accepted with 202', async () => {
    const session = await openSession(app.url, alice);
    const res = await send(app.url, { jsonrpc: '2.0', id: 'x', result: {} }, { token: alice, session });
    expect(res.status).toBe(202);
  });

  it('without Mcp-Session-Id: 400', async () => {
    const res = await send(app.url, ping(), { token: alice });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: 'Bad Request: Mcp-Session-Id header is required' },
    });
  });

  it('an unknown session, or another user’s, is 404 -32001', async () => {
    const session = await openSession(app.url, alice);
    const bob = await kit.sign({ sub: 'bob', client_id: 'c1', scope: 'read:courses-work', aud: app.url });
    const otherClient = await kit.sign({
      sub: 'alice',
      client_id: 'c2',
      scope: 'read:courses-work',
      aud: app.url,
    });
    for (const [token, id] of [
      [alice, 'nope'],
      [bob, session],
      [otherClient, session],
    ] as const) {
      const res = await send(app.url, ping(), { token, session: id });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'Session not found' },
      });
    }
  });

  it('a missing MCP-Protocol-Version means the negotiated one', async () => {
    const session = await openSession(app.url, alice, '2025-06-18');
    const res = await send(app.url, ping(7), { token: alice, session });
    expect([res.status, await res.json()]).toEqual([200, { jsonrpc: '2.0', id: 7, result: {} }]);
  });

  it('an unsupported MCP-Protocol-Version is 400, listing what is supported', async () => {
    const session = await openSession(app.url, alice);
    const res = await send(app.url, ping(), { token: alice, session, version: '2099-01-01' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32000,
        message: 'Bad Request: unsupported MCP-Protocol-Version: 2099-01-01',
        data: {
          supported: ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'],
          requested: '2099-01-01',
        },
      },
    });
  });

  // The transport spec makes only an invalid or unsupported version a 400; the conformance suite's 0.1.16
  // `server-sse-multiple-streams` sends its own version (not the negotiated one) on three concurrent POSTs.
  it('any supported MCP-Protocol-Version on a session request is served, under the negotiated revision', async () => {
    const session = await openSession(app.url, alice, '2025-06-18');
    const answers = await Promise.all(
      ['2025-11-25', '2025-03-26', '2024-11-05'].map(async (version, index) => {
        const res = await send(app.url, ping(1000 + index), { token: alice, session, version });
        return [res.status, await res.json()];
      }),
    );
    expect(answers).toEqual([
      [200, { jsonrpc: '2.0', id: 1000, result: {} }],
      [200, { jsonrpc: '2.0', id: 1001, result: {} }],
      [200, { jsonrpc: '2.0', id: 1002, result: {} }],
    ]);
    // The negotiated revision still decides the shape: 2025-06-18 has no batches, whatever the header says.
    const batch = await send(app.url, [ping(1), ping(2)], { token: alice, session, version: '2025-03-26' });
    expect(batch.status).toBe(400);
  });

  it('an invalid MCP-Protocol-Version on a session request is 400', async () => {
    const session = await openSession(app.url, alice, '2025-06-18');
    const res = await send(app.url, ping(), { token: alice, session, version: 'latest' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      'Bad Request: unsupported MCP-Protocol-Version: latest',
    );
  });

  it('bad JSON is 400 -32700; a non-JSON-RPC object is 400 -32600 with its id', async () => {
    const session = await openSession(app.url, alice);
    const bad = await send(app.url, '{"jsonrpc":', { token: alice, session });
    expect([bad.status, await bad.json()]).toEqual([
      400,
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: 'Parse error: the body is not valid JSON' },
      },
    ]);
    const wrong = await send(app.url, { jsonrpc: '1.0', id: 4, method: 'ping' }, { token: alice, session });
    expect([wrong.status, await wrong.json()]).toEqual([
      400,
      {
        jsonrpc: '2.0',
        id: 4,
        error: { code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0", got "1.0"' },
      },
    ]);
  });

  it('a non-JSON Content-Type is 415', async () => {
    const session = await openSession(app.url, alice);
    const res = await send(app.url, ping(), { token: alice, session, contentType: 'text/plain' });
    expect(res.status).toBe(415);
  });

  it('a body over the limit is 413', async () => {
    const session = await openSession(app.url, alice);
    const res = await send(
      app.url,
      { ...ping(), params: { pad: 'x'.repeat(20_000) } },
      { token: alice, session },
    );
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      'Payload Too Large: the limit is 10000 bytes',
    );
  });

  it('PUT is 405 with Allow', async () => {
    const res = await send(app.url, undefined, { token: alice, method: 'PUT' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, POST, DELETE, OPTIONS');
  });
});

describe('batches', () => {
  it('are served in 2025-03-26: responses in an array, notifications silent, invalid entries answered', async () => {
    const session = await openSession(app.url, alice, '2025-03-26');
    const res = await send(
      app.url,
      [
        ping(1),
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0 } },
        { nope: 1 },
        ping('b'),
      ],
      { token: alice, session, version: '2025-03-26' },
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0", got undefined' },
      },
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 'b', result: {} },
    ]);
  });

  it.each(['2024-11-05', '2025-06-18', '2025-11-25'])('are 400 in %s', async (revision) => {
    const session = await openSession(app.url, alice, revision);
    const res = await send(app.url, [ping()], { token: alice, session, version: revision });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: `Invalid Request: JSON-RPC batches are not part of protocol revision ${revision}`,
      },
    });
  });

  it('an empty batch is 400', async () => {
    const session = await openSession(app.url, alice, '2025-03-26');
    const res = await send(app.url, [], { token: alice, session });
    expect(res.status).toBe(400);
  });
});

/** Issue 13: 1,500 tools/call in one POST became 1,500 gateway calls, all at once. */
describe('batch limits', () => {
  /** A gateway that answers only when told, and remembers how many calls it held at once. */
  class HeldCaller extends FakeCaller {
    inFlight = 0;
    mostInFlight = 0;
    readonly #waiting: (() => void)[] = [];
    override async call(...args: Parameters<FakeCaller['call']>) {
      this.inFlight++;
      this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
      this.inFlight--;
      return super.call(...args);
    }
    releaseAll(): number {
      const released = this.#waiting.splice(0);
      for (const release of released) release();
      return released.length;
    }
  }
  let limited: RunningApp;
  let caller: HeldCaller;
  const call = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'listCourses', arguments: {} },
  });

  beforeAll(async () => {
    caller = new HeldCaller();
    limited = await startApp(() => ({
      issuer: ISSUER,
      verifier: kit.verifier,
      catalog,
      caller,
      serverInfo: { name: 'portcullis', version: '0.1.0' },
      keepAliveMs: 0,
      maxBatchSize: 10,
      batchConcurrency: 3,
      maxConcurrentPerSession: 2,
    }));
  });
  afterAll(() => limited.close());

  it('refuses a batch over maxBatchSize whole, with -32600 and 400, calling nothing', async () => {
    const token = await kit.sign({
      sub: 'alice',
      client_id: 'c1',
      scope: 'read:courses-work',
      aud: limited.url,
    });
    const session = await openSession(limited.url, token, '2025-03-26');
    const res = await send(
      limited.url,
      Array.from({ length: 11 }, (_, i) => call(i)),
      { token, session, version: '2025-03-26' },
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'Invalid Request: a batch holds at most 10 messages (mcp.maxBatchSize), got 11',
      },
    });
    expect(caller.calls).toHaveLength(0);
  });

  it('runs the calls of a batch at most batchConcurrency at a time, and answers them all', async () => {
    const token = await kit.sign({
      sub: 'alice',
      client_id: 'c1',
      scope: 'read:courses-work',
      aud: limited.url,
    });
    const session = await openSession(limited.url, token, '2025-03-26');
    const reply = send(
      limited.url,
      Array.from({ length: 10 }, (_, i) => call(i)),
      { token, session, version: '2025-03-26' },
    );
    let released = 0;
    const started = Date.now();
    while (released < 10 && Date.now() - started < 10_000) {
      await until(() => caller.inFlight > 0, 'a gateway call', 5_000);
      expect(caller.inFlight).toBeLessThanOrEqual(3);
      released += caller.releaseAll();
    }
    const res = await reply;
    expect(res.status).toBe(200);
    const answers = (await res.json()) as { id: number; result?: unknown }[];
    expect(answers.map((answer) => answer.id).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(answers.every((answer) => answer.result !== undefined)).toBe(true);
    expect(caller.mostInFlight).toBe(3);
    expect(released).toBe(10);
  });

  it('refuses a session its third concurrent POST (429, -32000, the request id echoed); others are not held up', async () => {
    const token = await kit.sign({
      sub: 'alice',
      client_id: 'c1',
      scope: 'read:courses-work',
      aud: limited.url,
    });
    const [session, other] = [await openSession(limited.url, token), await openSession(limited.url, token)];
    const running = [
      send(limited.url, call(1), { token, session }),
      send(limited.url, call(2), { token, session }),
    ];
    await until(() => caller.inFlight === 2, 'two held gateway calls', 5_000);
    const refused = await send(limited.url, call(3), { token, session });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: {
        code: -32000,
        message:
          'Too Many Requests: this session already has 2 requests running (mcp.maxConcurrentRequestsPerSession); retry when one has answered',
      },
    });
    // Notifications take no slot, and another session has its own.
    const ack = await send(
      limited.url,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: {} },
      {
        token,
        session,
      },
    );
    expect(ack.status).toBe(202);
    const elsewhere = send(limited.url, call(4), { token, session: other });
    await until(() => caller.inFlight === 3, "the other session's call", 5_000);
    caller.releaseAll();
    expect((await Promise.all([...running, elsewhere])).map((res) => res.status)).toEqual([200, 200, 200]);
    // Answered, the slots are free again.
    const again = send(limited.url, call(5), { token, session });
    await until(() => caller.inFlight === 1, 'the call after the slots were freed', 5_000);
    caller.releaseAll();
    expect((await again).status).toBe(200);
  });
});

describe('GET stream and DELETE', () => {
  it('GET without text/event-stream in Accept is 406; a second stream is 409', async () => {
    const session = await openSession(app.url, alice);
    const notSse = await send(app.url, undefined, {
      token: alice,
      session,
      method: 'GET',
      accept: 'application/json',
    });
    expect(notSse.status).toBe(406);
    const first = await send(app.url, undefined, {
      token: alice,
      session,
      method: 'GET',
      accept: 'text/event-stream',
    });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    expect(first.headers.get('mcp-session-id')).toBe(session);
    const second = await send(app.url, undefined, {
      token: alice,
      session,
      method: 'GET',
      accept: 'text/event-stream',
    });
    expect(second.status).toBe(409);
    await first.body!.cancel();
  });

  it('carries notifications/tools/list_changed when the catalog changes, each with its log id', async () => {
    const session = await openSession(app.url, alice);
    const res = await send(app.url, undefined, {
      token: alice,
      session,
      method: 'GET',
      accept: 'text/event-stream',
    });
    const stream = textOf(res);
    // 2025-11-25: the stream opens with an id-only event, so a cut before any message still resumes from here.
    const primed = await stream.until(/id: (\d+-\d+)\ndata: \n\n/);
    expect(primed.startsWith(': stream open\n\n')).toBe(true);
    catalog.set(sampleOperations().slice(1));
    const text = await stream.until(/list_changed/);
    expect(text).toMatch(
      /id: \d+-\d+\nevent: message\ndata: \{"jsonrpc":"2.0","method":"notifications\/tools\/list_changed"\}\n\n$/,
    );
    catalog.set(sampleOperations());
    await stream.cancel();
  });

  it('a GET with Last-Event-ID replays the notifications logged after it, then carries new ones', async () => {
    const session = await openSession(app.url, alice);
    const first = textOf(
      await send(app.url, undefined, { token: alice, session, method: 'GET', accept: 'text/event-stream' }),
    );
    const [, resumeFrom] = /id: (\d+-\d+)\ndata: /.exec(await first.until(/data: \n\n/))!;
    await first.cancel();
    await until(() => app.endpoint.stats().openStreams === 0, 'the server to see the stream closed', {
      timeoutMs: 1000,
      everyMs: 10,
    });
    // Two changes while no stream is open: both are in the log.
    catalog.set(sampleOperations().slice(1));
    catalog.set(sampleOperations());
    const resumed = textOf(
      await send(app.url, undefined, {
        token: alice,
        session,
        method: 'GET',
        accept: 'text/event-stream',
        headers: { 'last-event-id': resumeFrom! },
      }),
    );
    const replayed = await resumed.until(/(list_changed[\s\S]*){2}/);
    expect(sseMessages(replayed)).toEqual([
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
    ]);
    catalog.set(sampleOperations().slice(2));
    expect(sseMessages(await resumed.until(/(list_changed[\s\S]*){3}/))).toHaveLength(3);
    catalog.set(sampleOperations());
    await resumed.cancel();
  });

  it('a GET with a Last-Event-ID it cannot read starts from now', async () => {
    const session = await openSession(app.url, alice);
    const res = await send(app.url, undefined, {
      token: alice,
      session,
      method: 'GET',
      accept: 'text/event-stream',
      headers: { 'last-event-id': 'not-an-id' },
    });
    expect(res.status).toBe(200);
    const stream = textOf(res);
    expect(await stream.until(/data: \n\n/)).not.toContain('list_changed');
    await stream.cancel();
  });

  it('DELETE ends the session (204), then it is 404 and its stream is closed', async () => {
    const session = await openSession(app.url, alice);
    const stream = await send(app.url, undefined, {
      token: alice,
      session,
      method: 'GET',
      accept: 'text/event-stream',
    });
    const del = await send(app.url, undefined, { token: alice, session, method: 'DELETE' });
    expect(del.status).toBe(204);
    expect(await stream.text()).toMatch(/^: stream open\n\nid: \d+-\d+\ndata: \n\n$/);
    expect((await send(app.url, ping(), { token: alice, session })).status).toBe(404);
    expect((await send(app.url, undefined, { token: alice, session, method: 'DELETE' })).status).toBe(404);
  });

  it('a closed client stream frees the slot for a new GET', async () => {
    const session = await openSession(app.url, alice);
    const first = await send(app.url, undefined, {
      token: alice,
      session,
      method: 'GET',
      accept: 'text/event-stream',
    });
    await first.body!.cancel();
    await until(() => app.endpoint.stats().openStreams === 0, 'the server to see the stream closed', {
      timeoutMs: 1000,
      everyMs: 10,
    });
    const again = await send(app.url, undefined, {
      token: alice,
      session,
      method: 'GET',
      accept: 'text/event-stream',
    });
    expect(again.status).toBe(200);
    await again.body!.cancel();
  });
});

/** An SSE response read as text, as far as needed. */
