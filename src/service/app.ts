import {
  context,
  isSpanContextValid,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import Koa from 'koa';
import { errorFields, processLogger, traceparentTraceId, withRequestLogFields } from '../log.js';
import { incomingTraceContext } from '../tracing.js';

export interface ServiceAppOptions {
  /** Further middleware mounted after the built-in routes (the OAuth server, the MCP endpoint). */
  readonly middleware?: readonly Koa.Middleware[];
  /** The process's tracer (`telemetry.otlp`): a span per request, under the caller's `traceparent`; absent: none. */
  readonly tracer?: Tracer;
}

/**
 * The Koa process behind Envoy: health, then the mounted parts. Errors are answered with a safe body; the detail
 * goes to the log.
 */
export function createServiceApp(options: ServiceAppOptions = {}): Koa {
  // No forwarded header is trusted implicitly (ctx.ip would be X-Forwarded-For's first entry, which the client
  // writes): the client's address comes from service/client-address.ts.
  const app = new Koa({ proxy: false });
  app.silent = true;
  app.on('error', (error: unknown, ctx?: Koa.Context) => {
    // Koa reports it after the request's middleware returned, outside its log fields.
    const requestId = ctx?.get('x-request-id') || undefined;
    processLogger.error('request failed', { ...(requestId ? { requestId } : {}), ...errorFields(error) });
  });
  if (options.tracer) app.use(requestSpans(options.tracer));
  app.use(requestLogFields);
  app.use(async (ctx, next) => {
    if (ctx.path === '/healthz' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      ctx.body = { status: 'ok' };
      return;
    }
    await next();
  });
  for (const middleware of options.middleware ?? []) app.use(middleware);
  return app;
}

/**
 * Each request in a span under Envoy's (the request's `traceparent`), active while the request runs, so a tool call's
 * request to the gateway carries it on (gateway-caller.ts).
 */
function requestSpans(tracer: Tracer): Koa.Middleware {
  return async (ctx, next) => {
    const header = (name: string) => {
      const value = ctx.request.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const parent = incomingTraceContext({
      traceparent: header('traceparent'),
      tracestate: header('tracestate'),
    });
    const span = tracer.startSpan(
      `${ctx.method} ${ctx.path}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path } },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.setAttribute('http.response.status_code', ctx.status);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}

/**
 * Every line logged while a request runs carries Envoy's `x-request-id` and the trace id: the request span's when
 * the service traces (it runs after `requestSpans`), else the one the request's `traceparent` names.
 */
const requestLogFields: Koa.Middleware = (ctx, next) => {
  const span = trace.getActiveSpan()?.spanContext();
  return withRequestLogFields(
    {
      requestId: ctx.get('x-request-id') || undefined,
      traceId:
        span !== undefined && isSpanContextValid(span)
          ? span.traceId
          : traceparentTraceId(ctx.get('traceparent') || undefined),
    },
    next,
  );
};
