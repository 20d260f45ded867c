import { randomBytes } from 'node:crypto';
import { type IncomingHttpHeaders, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebSocketBackend, type WebSocketBackend } from '../../doubles/websocket-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { until } from '../../processes/wait.js';

const key = 'websocket-subscription-key-0001';

/**
 * WebSocket APIs (https://learn.microsoft.com/azure/api-management/websocket-api): the onHandshake operation's
 * inbound policies run on the opening handshake, then Envoy carries the upgraded connection; a refused handshake
 * never upgrades. A real WebSocket client (Node's) and a real WebSocket server, through Envoy and the engine.
 */
describe('a WebSocket API, through Envoy', () => {
  let backend: WebSocketBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startWebSocketBackend();
    // The deadlines of a request (the whole request within 1 s, the backend call within forward-request's 1 s)
    // bound the handshake only: the upgraded connection below lives longer than both.
    gateway = await startGateway(`
gateway:
  limits: { requestTimeoutMs: 1000 }
apis:
  - id: chat
    type: websocket
    urlSuffix: chat
    serviceUrl: ${backend.url}/socket
    subscriptionRequired: true
    policy: |
      <policies>
        <inbound><base />
          <set-header name="x-handshake-operation" exists-action="override"><value>@(context.Operation.Id)</value></set-header>
        </inbound>
        <backend><forward-request timeout="1" /></backend>
        <outbound><base /><set-header name="x-handshake-answered" exists-action="override"><value>@(context.Response.StatusCode.ToString())</value></set-header></outbound><on-error><base /></on-error>
      </policies>
  - id: limited
    type: websocket
    urlSuffix: limited
    serviceUrl: ${backend.url}/limited
    operations:
      - id: onHandshake
        method: GET
        urlTemplate: /
        policy: |
          <policies>
            <inbound><base /><rate-limit-by-key calls="1" renewal-period="300" counter-key="@(context.Request.IpAddress)" /></inbound>
            <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
          </policies>
  - id: forbidden
    type: websocket
    urlSuffix: forbidden
    serviceUrl: ${backend.url}/forbidden
    policy: |
      <policies>
        <inbound><base /><ip-filter action="forbid"><address>127.0.0.1</address></ip-filter></inbound>
        <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
      </policies>
subscriptions:
  - id: chat-subscription
    scope: { api: chat }
    primaryKey: ${key}
`);
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('runs the handshake through onHandshake, upgrades, and carries messages both ways past the request deadlines', async () => {
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/chat?subscription-key=${key}`);
    const received: string[] = [];
    const closed = new Promise<void>((resolve) => socket.addEventListener('close', () => resolve()));
    const sent = ['one', 'two', 'three', 'four', 'five'];
    // The greeting, then one echo per message sent; each message is sent after the previous answer, with pauses,
    // so the connection lives a few seconds.
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('error', () => reject(new Error('the WebSocket failed')));
      socket.addEventListener('message', (event) => {
        received.push(String(event.data));
        const next = sent[received.length - 1];
        if (next === undefined) resolve();
        else setTimeout(() => socket.send(next), 500);
      });
    });
    socket.close(1000, 'done');
    await closed;
    expect(received).toEqual(['hello', ...sent.map((text) => `echo:${text}`)]);
    expect(backend.messages).toEqual(sent);
    const handshake = backend.handshakes.at(-1)!;
    expect(handshake.url.startsWith('/socket')).toBe(true);
    expect(handshake.headers['x-handshake-operation']).toBe('onHandshake');
    expect(handshake.headers.upgrade?.toLowerCase()).toBe('websocket');
  });

  it("runs outbound on the 101's headers, and the connection still upgrades", async () => {
    const answer = await handshake(`${gateway.url}/chat?subscription-key=${key}`);
    expect(answer).toMatchObject({ upgraded: true, status: 101 });
    expect(answer.headers['x-handshake-answered']).toBe('101');
  });

  it('refuses a handshake without a subscription key with 401, and never upgrades', async () => {
    const before = backend.handshakes.length;
    const answer = await handshake(`${gateway.url}/chat`);
    expect(answer).toMatchObject({ upgraded: false, status: 401 });
    expect(backend.handshakes.length).toBe(before);
    // Node's WebSocket client fails the same handshake.
    await expect(webSocketOpens(`${gateway.url.replace('http', 'ws')}/chat`)).resolves.toBe(false);
  });

  it('refuses a handshake over the rate limit with 429, and never upgrades', async () => {
    const first = await handshake(`${gateway.url}/limited`);
    expect(first).toMatchObject({ upgraded: true, status: 101 });
    const before = backend.handshakes.length;
    const second = await handshake(`${gateway.url}/limited`);
    expect(second).toMatchObject({ upgraded: false, status: 429 });
    expect(backend.handshakes.length).toBe(before);
  });

  it('refuses a handshake from a forbidden address with 403 (ip-filter), and never upgrades', async () => {
    const before = backend.handshakes.length;
    const answer = await handshake(`${gateway.url}/forbidden`);
    expect(answer).toMatchObject({ upgraded: false, status: 403 });
    expect(backend.handshakes.length).toBe(before);
  });

  it('answers 404 for a path under the API other than onHandshake, without reaching the backend', async () => {
    const before = backend.handshakes.length;
    const answer = await handshake(`${gateway.url}/chat/elsewhere?subscription-key=${key}`);
    expect(answer).toMatchObject({ upgraded: false, status: 404 });
    expect(backend.handshakes.length).toBe(before);
  });
});

/**
 * Open connections (issue #38): API Management counts active WebSocket connections per unit of the gateway
 * (5,000); here each WebSocket API's cluster carries at most `gateway.limits.webSocketConnections` at once per Envoy.
 * `limit-concurrency` on onHandshake bounds handshakes in progress, not open connections: its slot is given back when
 * the backend answered the handshake.
 */
describe('open WebSocket connections, bounded per API', () => {
  let backend: WebSocketBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startWebSocketBackend();
    gateway = await startGateway(`
gateway:
  limits: { webSocketConnections: 2 }
apis:
  - id: capped
    type: websocket
    urlSuffix: capped
    serviceUrl: ${backend.url}/capped
  - id: concurrent
    type: websocket
    urlSuffix: concurrent
    serviceUrl: ${backend.url}/concurrent
    policy: |
      <policies>
        <inbound><base /></inbound>
        <backend><limit-concurrency key="handshakes" max-count="1"><forward-request /></limit-concurrency></backend>
        <outbound><base /></outbound><on-error><base /></on-error>
      </policies>
`);
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  const ws = (path: string) => `${gateway.url.replace('http', 'ws')}${path}`;

  it('upgrades two connections, answers the third handshake 503 without reaching the backend, and takes one again once one closed', async () => {
    const first = await openSocket(ws('/capped'));
    const second = await openSocket(ws('/capped'));
    const before = backend.handshakes.length;
    const third = await handshake(`${gateway.url}/capped`);
    expect(third).toMatchObject({ upgraded: false, status: 503 });
    expect(backend.handshakes.length).toBe(before);
    // The two open ones still carry frames both ways.
    expect(await first.roundTrip('still here')).toBe('echo:still here');
    expect(await second.roundTrip('me too')).toBe('echo:me too');
    // The bound is per API: another WebSocket API still upgrades.
    void (await openSocket(ws('/concurrent'))).close();

    // Closed, not waited for: Envoy ends a closed upgraded connection after its delayed-close timeout (1 s).
    void first.close();
    // Envoy counts the connection out once both of its ends closed: a new handshake then upgrades.
    let replacement: OpenSocket | undefined;
    await until(
      async () => {
        replacement = await openSocket(ws('/capped')).catch(() => undefined);
        return replacement !== undefined;
      },
      'a handshake to upgrade after one of the two connections closed',
      10_000,
    );
    // With two open again (the second and the replacement), the next is refused again.
    expect(await handshake(`${gateway.url}/capped`)).toMatchObject({ upgraded: false, status: 503 });
    void replacement!.close();
    void second.close();
  });

  it('limit-concurrency around forward-request on onHandshake holds its slot for the handshake only, not the connection', async () => {
    const first = await openSocket(ws('/concurrent'));
    // max-count 1, and the first connection is still open: the slot came back at its 101.
    const second = await openSocket(ws('/concurrent'));
    expect(await second.roundTrip('both open')).toBe('echo:both open');
    void second.close();
    void first.close();
  });
});

interface OpenSocket {
  /** Sends `text` and resolves with the next message that arrives. */
  roundTrip(text: string): Promise<string>;
  /** Closes (1000); resolves once the connection is closed. */
  close(): Promise<void>;
}

/** A WebSocket with Node's client, once open and greeted by the backend; rejects when the handshake fails. */
function openSocket(url: string): Promise<OpenSocket> {
  const socket = new WebSocket(url);
  const waiting: ((text: string) => void)[] = [];
  socket.addEventListener('message', (event) => waiting.shift()?.(String(event.data)));
  const closed = new Promise<void>((resolve) => socket.addEventListener('close', () => resolve()));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  return new Promise((resolve, reject) => {
    socket.addEventListener('error', () => reject(new Error(`the WebSocket to ${url} failed`)));
    void next().then((greeting) => {
      if (greeting !== 'hello') reject(new Error(`greeted with ${greeting}`));
      resolve({
        roundTrip(text) {
          const answer = next();
          socket.send(text);
          return answer;
        },
        close() {
          socket.close(1000, 'done');
          return closed;
        },
      });
    });
  });
}

/** An opening handshake by hand: whether it upgraded (101) or the status it was answered with. */
function handshake(
  url: string,
): Promise<{ upgraded: boolean; status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
      },
    });
    outgoing.on('upgrade', (response, socket) => {
      socket.destroy();
      resolve({ upgraded: true, status: response.statusCode ?? 0, headers: response.headers });
    });
    outgoing.on('response', (response) => {
      response.resume();
      resolve({ upgraded: false, status: response.statusCode ?? 0, headers: response.headers });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** Whether Node's WebSocket client gets an open connection (true) or fails (false). */
function webSocketOpens(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url);
    socket.addEventListener('open', () => {
      socket.close();
      resolve(true);
    });
    socket.addEventListener('error', () => resolve(false));
  });
}

/** The same handshake over the engine's ext_authz variant: only request headers cross, which is all it needs. */
describe('a WebSocket API, through Envoy with the engine over ext_authz', () => {
  let backend: WebSocketBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startWebSocketBackend();
    gateway = await startGateway(
      `
apis:
  - id: chat
    type: websocket
    urlSuffix: chat
    serviceUrl: ${backend.url}/socket
    subscriptionRequired: true
subscriptions:
  - id: chat-subscription
    scope: { api: chat }
    primaryKey: ${key}
`,
      {},
      {},
      undefined,
      'ext_authz',
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it('upgrades an admitted handshake and carries messages both ways; refuses one without a key with 401', async () => {
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/chat?subscription-key=${key}`);
    const received: string[] = [];
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('error', () => reject(new Error('the WebSocket failed')));
      socket.addEventListener('message', (event) => {
        received.push(String(event.data));
        if (received.length === 1) socket.send('over ext_authz');
        else resolve();
      });
    });
    socket.close(1000, 'done');
    expect(received).toEqual(['hello', 'echo:over ext_authz']);
    const before = backend.handshakes.length;
    expect(await handshake(`${gateway.url}/chat`)).toMatchObject({ upgraded: false, status: 401 });
    expect(backend.handshakes.length).toBe(before);
  });
});
