import type Koa from 'koa';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { GatewayCaller } from '../mcp/types.js';

/** What the MCP endpoint tells about itself, for the session and stream gauges. */
export interface McpLiveCounts {
  readonly sessions: number | undefined;
  readonly openStreams: number;
}

/**
 * The Koa service's Prometheus metrics: requests by route and status, OAuth token requests by grant and outcome,
 * MCP sessions and streams, and tool calls by API, operation and status. Served on the service's metrics port
 * (`service.metricsPort`), never on the listener Envoy forwards to.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'portcullis_service_requests_total',
    help: 'Requests the service answered, by route (the authorization server route name, "mcp", "healthz" or "other"), method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly durations = new Histogram({
    name: 'portcullis_service_request_duration_seconds',
    help: 'Time the service took to answer, by route (an MCP SSE stream counts until it closes).',
    labelNames: ['route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  private readonly grants = new Counter({
    name: 'portcullis_oauth_token_requests_total',
    help: 'Token endpoint requests by grant type and outcome (issued: 200; refused: an OAuth error).',
    labelNames: ['grant_type', 'outcome', 'status'] as const,
    registers: [this.registry],
  });
  private readonly toolCalls = new Counter({
    name: 'portcullis_mcp_tool_calls_total',
    help: 'MCP tool calls sent through the gateway, by API, operation and the status the gateway answered ("error": no answer).',
    labelNames: ['api', 'operation', 'status'] as const,
    registers: [this.registry],
  });
  private readonly toolDurations = new Histogram({
    name: 'portcullis_mcp_tool_call_duration_seconds',
    help: 'Time a tool call took through the gateway, by API and operation.',
    labelNames: ['api', 'operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  /** Set once the MCP endpoint exists (a service without `auth` has none). */
  private mcp: (() => McpLiveCounts) | undefined;

  constructor() {
    const live = () => this.mcp?.();
    new Gauge({
      name: 'portcullis_mcp_sessions_active',
      help: 'MCP sessions held in this process (absent with Redis: the sessions are shared, count them in Redis).',
      registers: [this.registry],
      collect() {
        const sessions = live()?.sessions;
        this.reset();
        if (sessions !== undefined) this.set(sessions);
      },
    });
    new Gauge({
      name: 'portcullis_mcp_streams_open',
      help: 'MCP SSE streams open in this process now.',
      registers: [this.registry],
      collect() {
        this.set(live()?.openStreams ?? 0);
      },
    });
  }

  watchMcp(counts: () => McpLiveCounts): void {
    this.mcp = counts;
  }

  /** Counts every request once its answer is known; mounted first, so it sees the status the client gets. */
  readonly middleware: Koa.Middleware = async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = routeName(ctx);
      const status = String(ctx.status);
      this.requests.inc({ route, method: ctx.method, status });
      this.durations.observe({ route }, (performance.now() - started) / 1000);
      const grantType = ctx.state.grantType;
      if (typeof grantType === 'string')
        this.grants.inc({
          grant_type: grantType,
          outcome: ctx.status === 200 ? 'issued' : 'refused',
          status,
        });
    }
  };

  /** The caller, counting each tool call by API, operation and the gateway's status. */
  countCalls(caller: GatewayCaller): GatewayCaller {
    return {
      call: async (operation, request, subject) => {
        const labels = { api: operation.apiId, operation: operation.operationId ?? '' };
        const started = performance.now();
        let status = 'error';
        try {
          const response = await caller.call(operation, request, subject);
          status = String(response.status);
          return response;
        } finally {
          this.toolCalls.inc({ ...labels, status });
          this.toolDurations.observe(labels, (performance.now() - started) / 1000);
        }
      },
    };
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}

/**
 * A bounded route label: @koa/router's matched route name for the authorization server's routes, the MCP endpoint
 * and health by path, anything else "other" (a client chooses the path, so the path itself is never a label).
 */
function routeName(ctx: Koa.Context): string {
  const matched = (ctx as { _matchedRouteName?: unknown })._matchedRouteName;
  if (typeof matched === 'string') return matched;
  if (ctx.path === '/healthz') return 'healthz';
  if (ctx.path === '/v1/mcp' || ctx.path.startsWith('/v1/mcp/')) return 'mcp';
  return 'other';
}
