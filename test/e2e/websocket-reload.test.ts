import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebSocketBackend, type WebSocketBackend } from '../doubles/websocket-backend.js';
import { type ManagementAccess, managementAccess, type Stack, startStack } from '../processes/stack.js';
import { until } from '../processes/wait.js';

/**
 * A WebSocket connection open through `up` outlives configuration changes (issues #38 and #35): while frames go both
 * ways on it, the gateway file changes (the WebSocket API's handshake policy and service URL are edited and a second
 * WebSocket API added; `up` hands routes and clusters to the running Envoy and the engine takes the new policy), then the
 * management API adds a third. The open connection keeps carrying frames after each change and is never closed; a
 * new connection's handshake after each change runs the new configuration.
 */

const ADMIN_PASSWORD = 'management password for the WebSocket reload test';

/** The chat API's handshake policy: it tells the backend which configuration admitted the handshake. */
const policy = (generation: string) =>
  `"<policies><inbound><base /><set-header name=\\"x-configuration\\" exists-action=\\"override\\"><value>${generation}</value></set-header></inbound><backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error></policies>"`;

let backend: WebSocketBackend;
let stack: Stack;
let management: ManagementAccess;

beforeAll(async () => {
  backend = await startWebSocketBackend();
  management = await managementAccess(ADMIN_PASSWORD);
  stack = await startStack({
    apisYaml: `  - id: chat
    type: websocket
    urlSuffix: chat
    serviceUrl: ${backend.url}/chat
    subscriptionRequired: false
    policy: ${policy('first')}`,
    extraYaml: management.yaml,
  });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await backend?.close();
});

/**
 * A WebSocket through the gateway that keeps talking: after the backend's greeting it sends `m1`, `m2`, … one after
 * the other, each once the echo of the one before arrived, until stopped (at most `maxMessages`).
 */
function chatter(url: string, maxMessages: number) {
  const socket = new WebSocket(url);
  const state = { echoes: 0, sent: 0, closed: undefined as string | undefined, stopping: false };
  const greeted = new Promise<void>((resolve, reject) => {
    socket.addEventListener('error', () => reject(new Error('the WebSocket failed')));
    socket.addEventListener('message', (event) => {
      const text = String(event.data);
      if (text === 'hello') resolve();
      else if (text === `echo:m${state.sent}`) state.echoes++;
      else state.closed = `unexpected message ${text} after m${state.sent}`;
      if (!state.stopping && state.sent < maxMessages) setTimeout(() => socket.send(`m${++state.sent}`), 10);
    });
  });
  socket.addEventListener('close', (event) => {
    state.closed ??= `closed ${event.code} ${event.reason}`;
  });
  /** Resolves once `count` more echoes than now have come back (the connection carried frames both ways). */
  const moreEchoes = (count: number, what: string) => {
    const target = state.echoes + count;
    return until(() => state.echoes >= target || state.closed !== undefined, what, 20_000).then(() =>
      expect(state.closed).toBeUndefined(),
    );
  };
  const stop = async () => {
    state.stopping = true;
    const closed = new Promise<CloseEvent>((resolve) => socket.addEventListener('close', resolve));
    socket.close(1000, 'done');
    return closed;
  };
  return { state, greeted, moreEchoes, stop };
}

/** Whether a new WebSocket handshake at `path` upgrades (true) or is refused (false). */
function opens(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${stack.gatewayUrl.replace('http', 'ws')}${path}`);
    socket.addEventListener('open', () => {
      socket.close();
      resolve(true);
    });
    socket.addEventListener('error', () => resolve(false));
  });
}

describe('a WebSocket connection open through up while the configuration changes', () => {
  it('keeps carrying frames both ways across a watched-file change (its API changed, one added) and a management change; new handshakes see each change', async () => {
    const chat = chatter(`${stack.gatewayUrl.replace('http', 'ws')}/chat`, 5_000);
    await chat.greeted;
    await chat.moreEchoes(5, 'echoes on the open connection before any change');
    expect(backend.handshakes.at(-1)!.headers['x-configuration']).toBe('first');

    // 1. The gateway file: the chat API's handshake policy changes and a second WebSocket API is added.
    const text = await readFile(stack.configFile, 'utf8');
    expect(text).toContain(policy('first'));
    const edited = text
      .replace(policy('first'), policy('second'))
      .replace(`serviceUrl: ${backend.url}/chat\n`, `serviceUrl: ${backend.url}/chat-moved\n`)
      .replace(
        '\nproducts:',
        `
  - id: chat-two
    type: websocket
    urlSuffix: chat-two
    serviceUrl: ${backend.url}/two
    subscriptionRequired: false
products:`,
      );
    await writeFile(stack.configFile, edited);
    await until(() => opens('/chat-two'), 'the added WebSocket API to upgrade a handshake', {
      timeoutMs: 30_000,
      detail: () => stack.output().slice(-3000),
    });
    expect(backend.handshakes.at(-1)!.url).toBe('/two');
    await chat.moreEchoes(5, 'echoes on the open connection after the file changed');
    // A new handshake on the changed API runs its new policy and reaches its new service URL (the engine may take
    // the policy a moment after Envoy's routes and clusters).
    await until(
      async () =>
        (await opens('/chat')) &&
        backend.handshakes.at(-1)!.headers['x-configuration'] === 'second' &&
        backend.handshakes.at(-1)!.url === '/chat-moved',
      'a new chat handshake to run the changed policy to the changed service URL',
      30_000,
    );

    // 2. The management API: a third WebSocket API.
    const put = await management.call('PUT', '/apis/chat-three', {
      type: 'websocket',
      urlSuffix: 'chat-three',
      serviceUrl: `${backend.url}/three`,
      subscriptionRequired: false,
    });
    expect(put.status, await put.text()).toBe(201);
    // Answered once Envoy has it: the new API upgrades at once.
    expect(await opens('/chat-three')).toBe(true);
    expect(backend.handshakes.at(-1)!.url).toBe('/three');
    await chat.moreEchoes(5, 'echoes on the open connection after the management change');

    // Both changes reached the running Envoy in place: a hot restart would end the connection once the previous
    // Envoy's drain is over (seconds later, after the chatter above), so its absence is checked here.
    await until(
      () => stack.output().split('configuration reloaded (Envoy updated in place)').length - 1 >= 2,
      "up's two in-place reload lines",
      { timeoutMs: 5_000, detail: () => stack.output().slice(-3000) },
    );
    expect(stack.output()).not.toContain('hot-restarted');

    // The first connection was never closed, and every frame it sent came back in order.
    expect(chat.state.closed).toBeUndefined();
    const closed = await chat.stop();
    expect(closed.code).toBe(1000);
    expect(chat.state.echoes).toBeGreaterThanOrEqual(15);
    const first = backend.messages.filter((message) => /^m\d+$/.test(message));
    expect(first.slice(0, chat.state.echoes)).toEqual(
      Array.from({ length: chat.state.echoes }, (_, index) => `m${index + 1}`),
    );
    // One upgraded connection for all of it: the backend saw the chat handshake once before the changes.
    expect(
      backend.handshakes.filter((handshake) => handshake.headers['x-configuration'] === 'first'),
    ).toHaveLength(1);
  }, 120_000);
});
