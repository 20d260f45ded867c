import type {
  CallToolResult,
  Client,
  LoggingLevel,
  McpSubscription,
  PriorDiscovery,
  StreamableHTTPClientTransport,
  Tool,
} from '@modelcontextprotocol/client';
import { PORTCULLIS_VERSION } from '../../version.js';
import type { UpstreamProgress } from './aggregator.js';
import { UpstreamFailure } from './errors.js';
import type { SavedUpstreamSession, UpstreamRoute } from './types.js';

export interface UpstreamConnectionOptions {
  /** Each upstream request (connect, list, call) fails after this long: a client never waits on a silent server. */
  readonly timeoutMs: number;
  /** The server said its tool list changed (its GET stream, or its `subscriptions/listen` stream). */
  readonly onToolsChanged: () => void;
  /** A log message the server sent outside any call this session streams (on its GET stream, mostly). */
  readonly onNotification?: (method: string, params: Record<string, unknown>) => void;
}

/** The reserved `_meta` keys of a 2026-07-28 result: the upstream's own envelope, not part of the tool's answer. */
const ENVELOPE_PREFIX = 'io.modelcontextprotocol/';

type Sdk = typeof import('@modelcontextprotocol/client');
let loading: Promise<Sdk> | undefined;

/**
 * The SDK client (with its schemas and validators, three quarters of a megabyte bundled) is loaded by the first upstream
 * connection, not when the service starts: most configurations have no MCP API.
 */
function sdk(): Promise<Sdk> {
  loading ??= import('@modelcontextprotocol/client');
  return loading;
}

/** A server whose `tools/list` pages never end is not read for ever (the SDK's own bound for its listTools). */
const MAX_PAGES = 64;

/** A `subscriptions/listen` stream that ended on its own is opened again after this long, */
const RELISTEN_MS = 1_000;
/** or later, up to this, while the streams end sooner than this. */
const RELISTEN_MAX_MS = 60_000;
const LISTEN_HEALTHY_MS = 10_000;

/**
 * Servers (by URL) that answered the last probe as session-era servers: their next sessions skip the
 * `server/discover` probe and go straight to `initialize`. A server that stops answering `initialize` is probed
 * again (see `open`). A 2026-07-28 verdict is not kept: its discovery result belongs to one authorization context.
 */
const sessionEra = new Set<string>();

/**
 * One connection to one upstream server, for one downstream session: the official SDK client (v2,
 * `@modelcontextprotocol/client`) over Streamable HTTP. It probes the server with `server/discover` and speaks
 * 2026-07-28 (no session, the revision in every request's `_meta`, list changes on a `subscriptions/listen` stream)
 * to a server that offers it, else falls back to `initialize` and a session revision (it holds `Mcp-Session-Id` and
 * opens the GET stream that carries `notifications/tools/list_changed`). Either way it reads SSE answers as they
 * stream. The tool list is read once and again after each change.
 */
export class UpstreamConnection {
  readonly #sdk: Sdk;
  readonly #client: Client;
  readonly #transport: StreamableHTTPClientTransport;
  readonly #options: UpstreamConnectionOptions;
  #tools: Promise<readonly Tool[]> | undefined;
  #cached: readonly Tool[] | undefined;
  #closed = false;
  /** The server offers logging (`initialize`'s or `server/discover`'s capabilities, or saved with the session). */
  #logging = false;
  /** 2026-07-28 has no `logging/setLevel`: the level the client asked for goes in each call's `_meta` instead. */
  #logLevel: LoggingLevel | undefined;
  /** The 2026-07-28 stream that carries the server's list changes. */
  #listening: McpSubscription | undefined;
  /** How long after its end the listen stream is opened again (`#relisten`). */
  #relistenMs = RELISTEN_MS / 2;
  /** Where the server's log messages go: the calls running on this session that stream their answer. */
  readonly #logSinks = new Set<(params: Record<string, unknown>) => void>();

  private constructor(
    loaded: Sdk,
    client: Client,
    transport: StreamableHTTPClientTransport,
    options: UpstreamConnectionOptions,
  ) {
    this.#sdk = loaded;
    this.#client = client;
    this.#transport = transport;
    this.#options = options;
  }

  /**
   * A new connection: `server/discover`, then 2026-07-28 when the server offers it, else `initialize` (the SDK
   * then opens the server's GET stream). A server known to speak only the session revisions skips the probe.
   */
  static async open(route: UpstreamRoute, options: UpstreamConnectionOptions): Promise<UpstreamConnection> {
    const known = sessionEra.has(route.url.href);
    const loaded = await sdk();
    try {
      return await UpstreamConnection.#open(loaded, route, options, known ? { kind: 'legacy' } : undefined);
    } catch (error) {
      const failure = failureOf(loaded, error);
      // A server that no longer answers `initialize` as it did may have moved to 2026-07-28: probe it again.
      if (!known || !answeredOtherwise(failure)) throw failure;
      sessionEra.delete(route.url.href);
      return UpstreamConnection.#open(loaded, route, options, undefined).catch((again: unknown) => {
        throw failureOf(loaded, again);
      });
    }
  }

  static async #open(
    loaded: Sdk,
    route: UpstreamRoute,
    options: UpstreamConnectionOptions,
    prior: PriorDiscovery | undefined,
  ): Promise<UpstreamConnection> {
    const connection = UpstreamConnection.#create(loaded, route, options);
    const client = connection.#client;
    try {
      await client.connect(connection.#transport, {
        timeout: options.timeoutMs,
        ...(prior ? { prior } : {}),
      });
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    connection.#logging = client.getServerCapabilities()?.logging !== undefined;
    if (client.getProtocolEra() === 'modern') {
      sessionEra.delete(route.url.href);
      // Not awaited: the first call need not wait for the stream's acknowledgement.
      if (client.getServerCapabilities()?.tools?.listChanged) void connection.#listen();
    } else sessionEra.add(route.url.href);
    return connection;
  }

  /**
   * An upstream session another service process opened for the same downstream session, continued here: the SDK
   * client skips `initialize` when it is given the session id, and a `ping` proves the server still holds it (a
   * server that forgot it answers 404, and the caller opens a new one). The server's GET stream stays with the
   * process that opened the session. Only session-era servers have one to continue.
   */
  static async resume(
    route: UpstreamRoute,
    saved: SavedUpstreamSession,
    options: UpstreamConnectionOptions,
  ): Promise<UpstreamConnection> {
    const loaded = await sdk();
    const connection = UpstreamConnection.#create(loaded, route, options, saved);
    try {
      await connection.#client.connect(connection.#transport);
      await connection.#client.ping({ timeout: options.timeoutMs });
    } catch (error) {
      await connection.#client.close().catch(() => {});
      throw failureOf(loaded, error);
    }
    connection.#logging = saved.logging;
    return connection;
  }

  /**
   * What another process needs to continue this session; undefined when the server issued no session id (a
   * 2026-07-28 server has none: another process connects to it on its own).
   */
  get saved(): SavedUpstreamSession | undefined {
    const sessionId = this.#transport.sessionId;
    const protocolVersion = this.#transport.protocolVersion;
    if (sessionId === undefined || protocolVersion === undefined) return undefined;
    return { sessionId, protocolVersion, logging: this.#logging };
  }

  static #create(
    loaded: Sdk,
    route: UpstreamRoute,
    options: UpstreamConnectionOptions,
    saved?: SavedUpstreamSession,
  ) {
    const client = new loaded.Client(
      { name: 'portcullis', version: PORTCULLIS_VERSION },
      { capabilities: {}, versionNegotiation: { mode: 'auto' } },
    );
    const transport = new loaded.StreamableHTTPClientTransport(route.url, {
      fetch: route.fetch,
      ...(saved === undefined ? {} : { sessionId: saved.sessionId, protocolVersion: saved.protocolVersion }),
    });
    const connection = new UpstreamConnection(loaded, client, transport, options);
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      connection.#tools = undefined;
      connection.#cached = undefined;
      options.onToolsChanged();
    });
    client.setNotificationHandler('notifications/message', (notification) => {
      const params = notification.params as Record<string, unknown>;
      const sink = [...connection.#logSinks].at(-1);
      if (sink) sink(params);
      else options.onNotification?.(notification.method, params);
    });
    // A failed GET or listen stream (the server offers none, or it dropped) costs only the relay of list changes.
    client.onerror = () => {};
    return connection;
  }

  /**
   * Opens the server's GET stream on a session continued here: the process that opened the session (and the
   * stream) has ended. The SDK opens it itself only after its own `initialize`; `resumeStream` without an event id
   * is that same GET. A server that offers no GET stream (405) is no error.
   */
  async openGetStream(): Promise<void> {
    await this.#transport.resumeStream('');
  }

  /**
   * Opens the 2026-07-28 stream of list changes (the session era's GET stream has no counterpart there), and opens
   * it again when it ends on its own (the gateway's stream timeouts end it as they end a GET stream) or could not be
   * opened: a second later, and each time twice as late (up to a minute) while it keeps failing or ending early.
   */
  async #listen(): Promise<void> {
    if (this.#closed) return;
    const started = Date.now();
    try {
      const subscription = await this.#client.listen(
        { toolsListChanged: true },
        { timeout: this.#options.timeoutMs },
      );
      // Closed while the stream was being acknowledged: it goes too.
      if (this.#closed) return void subscription.close().catch(() => {});
      this.#listening = subscription;
      void subscription.closed.then((how) => {
        if (how !== 'local') this.#relisten(Date.now() - started >= LISTEN_HEALTHY_MS);
      });
    } catch {
      // A server that refuses the stream costs the relay of its list changes until it takes it.
      this.#relisten(false);
    }
  }

  #relisten(healthy: boolean): void {
    if (this.#closed) return;
    this.#relistenMs = healthy ? RELISTEN_MS : Math.min(this.#relistenMs * 2, RELISTEN_MAX_MS);
    setTimeout(() => void this.#listen(), this.#relistenMs).unref();
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
    const options = { timeout: this.#options.timeoutMs };
    try {
      // 2026-07-28: the SDK reads every page, drops tools whose x-mcp-header declarations are invalid (the spec's
      // MUST) and keeps the list for callTool's Mcp-Param-* headers. A session revision: page by page, because a
      // session continued from another process has no capabilities here, and the SDK's listTools returns nothing
      // from a server whose capabilities it has not seen.
      const tools =
        this.#client.getProtocolEra() !== 'modern'
          ? await this.#pages(options)
          : this.#client.getServerCapabilities()?.tools
            ? (await this.#client.listTools(undefined, options)).tools
            : [];
      this.#cached = tools;
      return tools;
    } catch (error) {
      throw failureOf(this.#sdk, error);
    }
  }

  async #pages(options: { timeout: number }): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const result = await this.#client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        options,
      );
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined) return tools;
    }
    throw new UpstreamFailure({
      kind: 'rpc',
      code: -32603,
      message: `tools/list did not end within ${MAX_PAGES} pages`,
    });
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
    const level = this.#client.getProtocolEra() === 'modern' && this.#logging ? this.#logLevel : undefined;
    try {
      const result = await this.#client.callTool(
        { name, arguments: args, ...(level ? { _meta: { [this.#sdk.LOG_LEVEL_META_KEY]: level } } : {}) },
        {
          timeout: this.#options.timeoutMs,
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
        },
      );
      return withoutEnvelope(result);
    } catch (error) {
      throw failureOf(this.#sdk, error);
    } finally {
      if (sink) this.#logSinks.delete(sink);
    }
  }

  /**
   * The server's log level for this connection, when it offers logging: `logging/setLevel` in a session revision;
   * in 2026-07-28, which has no such method, the level goes with each call (`_meta`, `io.modelcontextprotocol/logLevel`).
   */
  async setLogLevel(level: LoggingLevel): Promise<void> {
    if (!this.#logging) return;
    if (this.#client.getProtocolEra() === 'modern') {
      this.#logLevel = level;
      return;
    }
    await this.#client
      .setLoggingLevel(level, { timeout: this.#options.timeoutMs })
      .catch((error: unknown) => {
        throw failureOf(this.#sdk, error);
      });
  }

  /**
   * Ends the upstream session (DELETE, as the spec asks of a client that is done; a 2026-07-28 server has none,
   * only its listen stream to close), then the client. `end: false` only lets go of it here: another process may
   * still be using it.
   */
  async close(end = true): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#listening?.close().catch(() => {});
    if (end) await this.#transport.terminateSession().catch(() => {});
    await this.#client.close().catch(() => {});
  }

  /** Ends a session this process does not hold (another process opened it): one DELETE with its id. */
  static async end(route: UpstreamRoute, saved: SavedUpstreamSession): Promise<void> {
    const { StreamableHTTPClientTransport } = await sdk();
    const transport = new StreamableHTTPClientTransport(route.url, {
      fetch: route.fetch,
      sessionId: saved.sessionId,
      protocolVersion: saved.protocolVersion,
    });
    await transport.terminateSession().catch(() => {});
    await transport.close().catch(() => {});
  }
}

/**
 * The SDK's errors as the failure they say (errors.ts names the server): its JSON-RPC errors, its timeout, an HTTP
 * status (the version probe puts one in `data` of an error of its own), a missing authorization (401).
 */
function failureOf(loaded: Sdk, error: unknown): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error;
  const cause = { cause: error };
  if (error instanceof loaded.ProtocolError)
    return new UpstreamFailure(
      {
        kind: 'rpc',
        code: error.code,
        message: error.message,
        ...(error.data === undefined ? {} : { data: error.data }),
      },
      cause,
    );
  if (error instanceof loaded.UnauthorizedError)
    return new UpstreamFailure({ kind: 'http', status: 401 }, cause);
  if (error instanceof loaded.SdkError) {
    if (error.code === loaded.SdkErrorCode.RequestTimeout)
      return new UpstreamFailure({ kind: 'timeout' }, cause);
    const status = (error.data as { status?: unknown } | undefined)?.status;
    if (typeof status === 'number' && status > 0) return new UpstreamFailure({ kind: 'http', status }, cause);
  }
  return new UpstreamFailure({ kind: 'unreachable' }, cause);
}

/**
 * Whether a server answered `initialize` with something other than a session (a JSON-RPC error, or a 4xx other than
 * an authorization or a policy's refusal): what a server that moved to 2026-07-28 answers.
 */
function answeredOtherwise(failure: UpstreamFailure): boolean {
  const { failure: f } = failure;
  return (
    f.kind === 'rpc' ||
    (f.kind === 'http' && f.status >= 400 && f.status < 500 && ![401, 403, 429].includes(f.status))
  );
}

/** The result without the upstream's reserved `_meta` keys (its `serverInfo`): the client hears from Portcullis. */
function withoutEnvelope(result: CallToolResult): CallToolResult {
  const meta = result._meta;
  if (!meta || !Object.keys(meta).some((key) => key.startsWith(ENVELOPE_PREFIX))) return result;
  const kept = Object.fromEntries(Object.entries(meta).filter(([key]) => !key.startsWith(ENVELOPE_PREFIX)));
  const { _meta: _, ...rest } = result;
  return Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest;
}
