import Koa from 'koa';
import { errorFields, jsonLogger } from '../log.js';

export interface ServiceAppOptions {
  /** Further middleware mounted after the built-in routes (the OAuth server, the MCP endpoint). */
  readonly middleware?: readonly Koa.Middleware[];
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
  app.on('error', (error: unknown) => {
    jsonLogger.error('service: request failed', errorFields(error));
  });
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
