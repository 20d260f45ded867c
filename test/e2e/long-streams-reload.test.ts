import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSession, send } from '../doubles/mcp.js';
import { registerPublicClient, signInWithPkce } from '../doubles/oauth-client.js';
import { type OpenAiBackend, type StreamGate, startOpenAiBackend } from '../doubles/openai-backend.js';
import { PageDriver } from '../doubles/stack-browser.js';
import {
  type ManagementAccess,
  managementAccess,
  type Stack,
  startStack,
  USERS,
} from '../processes/stack.js';
import { until } from '../processes/wait.js';

/**
 * Long requests outlive a configuration change (issue #35): an API added and then removed through the management
 * API while (a) an SSE completion of 20 s, (b) an MCP session's GET stream, (c) a 2026-07-28
 * `subscriptions/listen` stream and (d) a slow 50 MB download are in flight. `up` hands the change to the running
 * Envoy through its dynamic resources (routes and clusters; the listener stays as it is), so none of them is cut,
 * and the MCP streams get `notifications/tools/list_changed` for each change. The test prints how long a
 * management `PUT /apis/…` takes until the new API answers, and how long after each change the notifications
 * arrived (figures, not assertions: timing belongs to no assertion here).
 */

const DOWNLOAD_BYTES = 50 * 1024 * 1024;
const DOWNLOAD_CHUNK = 256 * 1024;
/** 200 chunks of 256 KiB, one every 75 ms: the download takes about 15 s. */
const DOWNLOAD_PAUSE_MS = 75;
const COMPLETION_MS = 20_000;
const ADMIN_PASSWORD = 'management password for the streams test';

/** A backend whose one file is sent slowly, so the download is still running while the gateway changes. */
async function startSlowFileBackend(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    if (request.url !== '/big') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': String(DOWNLOAD_BYTES),
    });
    const chunk = Buffer.alloc(DOWNLOAD_CHUNK, 0x61);
    let sent = 0;
    const timer = setInterval(() => {
      if (sent >= DOWNLOAD_BYTES) {
        clearInterval(timer);
        response.end();
        return;
      }
      response.write(chunk);
      sent += chunk.length;
    }, DOWNLOAD_PAUSE_MS);
    response.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${address.port}` };
}

/** A streamed response read to its end in the background: what arrived, when each match arrived, how it ended. */
function follow(response: Response, watch: RegExp) {
  const state = {
    text: '',
    bytes: 0,
    /** Arrival times (Date.now()) of each new occurrence of `watch`. */
    arrivals: [] as number[],
    ended: false as false | 'done' | string,
  };
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let seen = 0;
  const done = (async () => {
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) {
          state.ended = 'done';
          return;
        }
        state.bytes += value.length;
        // The download is not text: only the streams' text is kept.
        if (watch.source !== '$^') {
          state.text += decoder.decode(value, { stream: true });
          const count = state.text.match(new RegExp(watch.source, 'g'))?.length ?? 0;
          for (; seen < count; seen++) state.arrivals.push(Date.now());
        }
      }
    } catch (error) {
      state.ended = `error: ${(error as Error).message}`;
    }
  })();
  return { state, done, cancel: () => reader.cancel().catch(() => {}) };
}

let stack: Stack;
let openai: OpenAiBackend;
let files: { server: Server; url: string };
let management: ManagementAccess;

beforeAll(async () => {
  openai = await startOpenAiBackend({ pieces: ['One', ' long', ' answer.'] });
  files = await startSlowFileBackend();
  management = await managementAccess(ADMIN_PASSWORD);
  stack = await startStack({
    apisYaml: `  - id: llm
    urlSuffix: llm
    serviceUrl: ${openai.url}
    subscriptionRequired: false
    # A policy, so the completion goes through the engine (ext_proc) as well as Envoy.
    policy: "<policies><inbound><base /><set-header name=\\"x-through\\" exists-action=\\"override\\"><value>engine</value></set-header></inbound><backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error></policies>"
    operations:
      - { id: chat, method: POST, urlTemplate: /chat/completions }
  - id: files
    urlSuffix: files
    serviceUrl: ${files.url}
    subscriptionRequired: false
    operations:
      - { id: big, method: GET, urlTemplate: /big }`,
    extraYaml: management.yaml,
  });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await openai?.close();
  await new Promise((resolve) => files?.server.close(resolve));
});

async function mcpToken(): Promise<string> {
  const registered = await registerPublicClient(
    stack.issuer,
    'streams-test',
    'http://127.0.0.1:47125/callback',
  );
  const tokens = await signInWithPkce(registered, new PageDriver(), USERS.alice, {
    scope: 'read:courses-work',
    resource: stack.mcpUrl,
  });
  return tokens.access_token;
}

describe('long requests across a change applied in the running Envoy', () => {
  it('an API added and removed: no stream is cut, the MCP streams hear both changes', async () => {
    const token = await mcpToken();
    const started = Date.now();

    // (a) An SSE completion held open for 20 s after its first chunk.
    const gate: StreamGate = openai.holdNextStream();
    const completion = follow(
      await fetch(`${stack.gatewayUrl}/llm/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      }),
      /\[DONE\]/,
    );
    await gate.firstChunkWritten;
    const release = setTimeout(() => gate.release(), COMPLETION_MS - (Date.now() - started));

    // (d) A slow 50 MB download.
    const downloadResponse = await fetch(`${stack.gatewayUrl}/files/big`);
    expect(downloadResponse.status).toBe(200);
    const download = follow(downloadResponse, /$^/);

    // (b) An MCP session's GET stream.
    const session = await openSession(stack.mcpUrl, token, '2025-11-25');
    const getResponse = await fetch(stack.mcpUrl, {
      headers: {
        accept: 'text/event-stream',
        authorization: `Bearer ${token}`,
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-11-25',
      },
    });
    expect(getResponse.status).toBe(200);
    const sessionStream = follow(getResponse, /notifications\/tools\/list_changed/);

    // (c) A 2026-07-28 subscriptions/listen stream.
    const listenResponse = await send(
      stack.mcpUrl,
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'subscriptions/listen',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
          notifications: { toolsListChanged: true },
        },
      },
      { token, version: '2026-07-28', headers: { 'mcp-method': 'subscriptions/listen' } },
    );
    expect(listenResponse.status).toBe(200);
    const listen = follow(listenResponse, /notifications\/tools\/list_changed/);
    await until(() => listen.state.text.includes('acknowledged'), 'the subscription acknowledged');
    await until(() => download.state.bytes > 0, 'the download under way');

    // The change: a new API through the management API, answered once the running Envoy serves it.
    const added = Date.now();
    const put = await management.call('PUT', '/apis/extra', {
      urlSuffix: 'extra',
      serviceUrl: stack.echo.url,
      subscriptionRequired: false,
      operations: [{ id: 'get-extra', method: 'GET', urlTemplate: '/things/{name}' }],
    });
    expect(put.status).toBe(201);
    await until(
      async () => (await fetch(`${stack.gatewayUrl}/extra/things/one`)).status === 200,
      'the added API to answer',
    );
    const answering = Date.now() - added;
    // Published as API Management publishes an API, through a product: the tool appears for the product's users.
    const published = Date.now();
    expect((await management.call('PUT', '/products/courses/apis/extra')).status).toBe(201);
    await until(
      () => sessionStream.state.arrivals.length >= 1 && listen.state.arrivals.length >= 1,
      'tools/list_changed on both MCP streams after the addition',
      { detail: () => JSON.stringify([sessionStream.state, listen.state]) },
    );

    // Deleting the API takes it out of its product too: one change for Envoy and for the tool list.
    const removed = Date.now();
    expect((await management.call('DELETE', '/apis/extra')).status).toBe(204);
    expect((await fetch(`${stack.gatewayUrl}/extra/things/one`)).status).toBe(404);
    await until(
      () => sessionStream.state.arrivals.length >= 2 && listen.state.arrivals.length >= 2,
      'tools/list_changed on both MCP streams after the removal',
    );

    // The long ones finish whole; the MCP streams are still open.
    await completion.done;
    await download.done;
    clearTimeout(release);
    const completionMs = Date.now() - started;
    expect(completion.state.ended).toBe('done');
    expect(completion.state.text).toContain('long');
    expect(completion.state.text).toContain('data: [DONE]');
    expect(download.state.ended).toBe('done');
    expect(download.state.bytes).toBe(DOWNLOAD_BYTES);
    expect(sessionStream.state.ended).toBe(false);
    expect(listen.state.ended).toBe(false);
    expect(openai.received.at(-1)?.headers['x-through']).toBe('engine');
    // Envoy was never restarted for it.
    expect(stack.output()).not.toContain('Envoy hot-restarted');
    expect(stack.output()).toContain('configuration reloaded (Envoy updated in place)');

    const delayAfter = (arrivals: number[], at: number) => `${arrivals.find((time) => time >= at)! - at} ms`;
    console.log(
      [
        `PUT /apis/extra until the new API answered: ${answering} ms`,
        `tools/list_changed after PUT /products/courses/apis/extra: session GET stream ${delayAfter(sessionStream.state.arrivals, published)}, subscriptions/listen ${delayAfter(listen.state.arrivals, published)}`,
        `tools/list_changed after DELETE /apis/extra: session GET stream ${delayAfter(sessionStream.state.arrivals, removed)}, subscriptions/listen ${delayAfter(listen.state.arrivals, removed)}`,
        `SSE completion: ${completionMs} ms, whole; download: ${download.state.bytes} bytes, whole`,
      ].join('\n'),
    );
    await sessionStream.cancel();
    await listen.cancel();
  }, 90_000);
});
