import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  type LoggingLevel,
  LoggingMessageNotificationSchema,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { PORTCULLIS_VERSION } from '../../version.js';
import type { UpstreamProgress } from './aggregator.js';
import type { SavedUpstreamSession, UpstreamRoute } from './types.js';

export interface UpstreamConnectionOptions {
  /** Each upstream request (connect, list, call) fails after this long: a client never waits on a silent server. */
  readonly timeoutMs: number;
  /** The server said its tool list changed (its GET stream, relayed by the SDK client). */
  readonly onToolsChanged: () => void;
  /** A log message the server sent outside any call this session streams (on its GET stream, mostly). */
  readonly onNotification?: (method: string, params: Record<string, unknown>) => void;
}

/**
 * One session with one upstream server, for one downstream session: the official SDK client over Streamable HTTP
 * (it negotiates the revision, holds `Mcp-Session-Id`, reads SSE answers as they stream and opens the GET stream
 * that carries `notifications/tools/list_changed`). The tool list is read once and again after each change.
 */
export class UpstreamConnection {
  readonly #client: Client;
  readonly #transport: StreamableHTTPClientTransport;
  #tools: Promise<readonly Tool[]> | undefined;
  #cached: readonly Tool[] | undefined;
  #closed = false;
  /** The server offers logging (from `initialize`, or saved with the session another process opened). */
  #logging = false;
  /** Where the server's log messages go: the calls running on this session that stream their answer. */
  readonly #logSinks = new Set<(params: Record<string, unknown>) => void>();

  private constructor(
    client: Client,
    transport: StreamableHTTPClientTransport,
    private readonly options: UpstreamConnectionOptions,
  ) {
    this.#client = client;
    this.#transport = transport;
  }

  /** A new upstream session: `initialize`, then the SDK opens the server's GET stream. */
  static async open(route: UpstreamRoute, options: UpstreamConnectionOptions): Promise<UpstreamConnection> {
    const connection = UpstreamConnection.#create(route, options);
    try {
      await connection.#client.connect(connection.#transport, { timeout: options.timeoutMs });
    } catch (error) {
      await connection.#client.close().catch(() => {});
      throw error;
    }
    connection.#logging = connection.#client.getServerCapabilities()?.logging !== undefined;
    return connection;
  }

  /**
   * An upstream session another service process opened for the same downstream session, continued here: the SDK
   * client skips `initialize` when it is given the session id, and a `ping` proves the server still holds it (a
   * server that forgot it answers 404, and the caller opens a new one). The server's GET stream stays with the
   * process that opened the session.
   */
  static async resume(
    route: UpstreamRoute,
    saved: SavedUpstreamSession,
    options: UpstreamConnectionOptions,
  ): Promise<UpstreamConnection> {
    const connection = UpstreamConnection.#create(route, options, saved.sessionId);
    try {
      await connection.#client.connect(connection.#transport);
      connection.#transport.setProtocolVersion(saved.protocolVersion);
      await connection.#client.ping({ timeout: options.timeoutMs });
    } catch (error) {
      await connection.#client.close().catch(() => {});
      throw error;
    }
    connection.#logging = saved.logging;
    return connection;
  }

  /** What another process needs to continue this session; undefined when the server issued no session id. */
  get saved(): SavedUpstreamSession | undefined {
    const sessionId = this.#transport.sessionId;
    const protocolVersion = this.#transport.protocolVersion;
    if (sessionId === undefined || protocolVersion === undefined) return undefined;
    return { sessionId, protocolVersion, logging: this.#logging };
  }

  static #create(route: UpstreamRoute, options: UpstreamConnectionOptions, sessionId?: string) {
    const client = new Client({ name: 'portcullis', version: PORTCULLIS_VERSION }, { capabilities: {} });
    const transport = new StreamableHTTPClientTransport(route.url, {
      fetch: route.fetch,
      ...(sessionId === undefined ? {} : { sessionId }),
    });
    const connection = new UpstreamConnection(client, transport, options);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      connection.#tools = undefined;
      connection.#cached = undefined;
      options.onToolsChanged();
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      const params = notification.params as Record<string, unknown>;
      const sink = [...connection.#logSinks].at(-1);
      if (sink) sink(params);
      else options.onNotification?.(notification.method, params);
    });
    // A failed GET stream (the server offers none, or it dropped) costs only the relay of list changes.
    client.onerror = () => {};
    return connection;
  }

  /**
   * Opens the server's GET stream on a session continued here: the process that opened the session (and the
   * stream) has ended. The SDK opens it itself only after its own `initialize`; `resumeStream` without an event id
   * is that same GET. A server that offers no GET stream (405) is no error.
   */
  async listen(): Promise<void> {
    await this.#transport.resumeStream('');
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Every tool the server lists (all pages), read once until the server says the list changed. */
  tools(): Promise<readonly Tool[]> {
    if (!this.#tools) {
      const reading = this.#readTools();
      this.#tools = reading;
      // A failed read is not kept: the next caller asks again.
      reading.catch(() => {
        if (this.#tools === reading) this.#tools = undefined;
      });
    }
    return this.#tools;
  }

  /** The tools already read, if any (no request): what a synchronous scope check can use. */
  cachedTools(): readonly Tool[] | undefined {
    return this.#cached;
  }

  async #readTools(): Promise<readonly Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.#client.listTools(cursor === undefined ? {} : { cursor }, {
        timeout: this.options.timeoutMs,
      });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    this.#cached = tools;
    return tools;
  }

  /**
   * Calls a tool. With `onProgress` the SDK sends the server a progress token of its own and hands each
   * `notifications/progress` back (each one also restarts the timeout: a server that reports is not silent). With
   * `onLog`, the server's `notifications/message` while the call runs go to it: the SDK client does not say which
   * request a log message came with, so while several calls run on this session each goes to the latest one.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    relay: {
      signal?: AbortSignal;
      onProgress?: (progress: UpstreamProgress) => void;
      onLog?: (params: Record<string, unknown>) => void;
    } = {},
  ): Promise<CallToolResult> {
    const sink = relay.onLog;
    if (sink) this.#logSinks.add(sink);
    try {
      return (await this.#client.callTool({ name, arguments: args }, undefined, {
        timeout: this.options.timeoutMs,
        ...(relay.signal ? { signal: relay.signal } : {}),
        ...(relay.onProgress
          ? {
              resetTimeoutOnProgress: true,
              onprogress: ({ progress, total, message }) =>
                relay.onProgress?.({
                  progress,
                  ...(total === undefined ? {} : { total }),
                  ...(message === undefined ? {} : { message }),
                }),
            }
          : {}),
      })) as CallToolResult;
    } finally {
      if (sink) this.#logSinks.delete(sink);
    }
  }

  /** The server's log level for this session (`logging/setLevel`), when it offers logging. */
  async setLogLevel(level: LoggingLevel): Promise<void> {
    if (!this.#logging) return;
    await this.#client.setLoggingLevel(level, { timeout: this.options.timeoutMs });
  }

  /**
   * Ends the upstream session (DELETE, as the spec asks of a client that is done), then the client. `end: false`
   * only lets go of it here: another process may still be using it.
   */
  async close(end = true): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (end) await this.#transport.terminateSession().catch(() => {});
    await this.#client.close().catch(() => {});
  }

  /** Ends a session this process does not hold (another process opened it): one DELETE with its id. */
  static async end(route: UpstreamRoute, saved: SavedUpstreamSession): Promise<void> {
    const transport = new StreamableHTTPClientTransport(route.url, {
      fetch: route.fetch,
      sessionId: saved.sessionId,
    });
    transport.setProtocolVersion(saved.protocolVersion);
    await transport.terminateSession().catch(() => {});
    await transport.close().catch(() => {});
  }
}
