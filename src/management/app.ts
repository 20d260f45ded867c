import Router from '@koa/router';
import Koa from 'koa';
import { errorFields, processLogger } from '../log.js';
import { authenticateAdministrators } from './authenticate.js';
import { ConfigDocument } from './config-document.js';
import { ManagementError } from './errors.js';
import { keepInsideFolder } from './inside-folder.js';
import { PendingOperations } from './pending-operations.js';
import { type ManagementApi, readBody, validate } from './resource.js';
import { managementResources } from './resources/index.js';
import type { ManagedConfiguration } from './store.js';
import { refuseForgedWrites } from './write-guard.js';

export interface ManagementAppOptions {
  readonly store: ManagedConfiguration;
  /** One line per change made (who, what, the outcome): the audit trail. Default: the process's log. */
  readonly audit?: (line: string) => void;
  /** How often each process of the gateway was restarted since it started (`up`), shown at `/`. */
  readonly restarts?: () => Readonly<Record<string, number>>;
}

/**
 * The management REST API: the gateway's APIs, operations, products, subscriptions, users, groups, named values,
 * backends, policies and the whole configuration (export / import), in the configuration file's own model. Served
 * by `up` on loopback behind Envoy's management listener; every call needs an administrator's credential.
 */
export function createManagementApp(options: ManagementAppOptions): Koa {
  const { store } = options;
  const audit = options.audit ?? ((line: string) => processLogger.info(line));
  const app = new Koa();
  app.silent = true;

  // Changes run one at a time: each reads the configuration the previous one left.
  let queue: Promise<unknown> = Promise.resolve();
  const operations = new PendingOperations();
  const api: ManagementApi = {
    read() {
      const running = store.running();
      return { document: new ConfigDocument(running.file, running.texts), running };
    },
    change(ctx, edit) {
      const run = queue.then(async () => {
        const { document, running } = api.read();
        const named = new Set(document.policyFileReferences().map((reference) => reference.file));
        const result = await edit(document);
        keepInsideFolder(document, running.file, named);
        let restarting = () => {};
        const accepted = new Promise<'accepted'>((resolve) => {
          restarting = () => resolve('accepted');
        });
        const outcome = store.change(document.changes(), running.generation, { restarting });
        const first = await Promise.race([outcome, accepted]);
        if (first === 'accepted') {
          ctx.state.operation = operations.track(outcome);
          return { result, finished: outcome };
        }
        if (!first.ok) {
          const code =
            first.status === 400
              ? 'ValidationError'
              : first.status === 409
                ? 'Conflict'
                : 'ServiceUnavailable';
          throw new ManagementError(first.status, code, first.message, first.problems);
        }
        return { result, finished: outcome };
      });
      // The next change starts from what this one leaves, so it waits until this one is applied, not only accepted.
      queue = run.then((step) => step.finished).catch(() => {});
      return run.then((step) => step.result);
    },
    async readJson(ctx, schema) {
      const text = await readBody(ctx, ['application/json']);
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (error) {
        throw new ManagementError(
          400,
          'ValidationError',
          `the request body is not JSON: ${(error as Error).message}`,
        );
      }
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
        throw new ManagementError(400, 'ValidationError', 'the request body must be a JSON object');
      }
      return { raw: raw as Record<string, unknown>, value: validate(schema, text, 'request body') };
    },
    readText: readBody,
  };

  const router = new Router();
  router.get('/operations/:operationId', (ctx) => {
    const status = operations.get(ctx.params.operationId!);
    if (!status)
      throw new ManagementError(404, 'ResourceNotFound', `operation "${ctx.params.operationId}" not found`);
    ctx.body = status;
  });
  router.get('/', (ctx) => {
    ctx.body = {
      generation: store.running().generation,
      resources: managementResources.map((resource) => resource.name),
      ...(options.restarts ? { restarts: options.restarts() } : {}),
    };
  });
  for (const resource of managementResources) resource.register(router, api);

  app.use(async (ctx, next) => {
    try {
      await next();
      if (ctx.state.operation !== undefined && ctx.status < 300) {
        // Validated and written; Envoy is being restarted with it (see PendingOperations).
        ctx.status = 202;
        ctx.set('Location', `/operations/${ctx.state.operation}`);
      }
      if (ctx.status === 404 && ctx.body === undefined)
        throw new ManagementError(404, 'ResourceNotFound', `no resource at ${ctx.path}`);
      // The router answered 405 (or 501, a method no route takes) with the methods the path does take.
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
        throw new ManagementError(405, 'MethodNotAllowed', 'this resource does not take that method', [], {
          Allow: ctx.response.get('Allow'),
        });
      }
    } catch (error) {
      const failure =
        error instanceof ManagementError
          ? error
          : new ManagementError(
              500,
              'InternalError',
              'the management API failed; the details are in the log',
            );
      if (!(error instanceof ManagementError)) {
        processLogger.error('management: request failed', {
          method: ctx.method,
          path: ctx.path,
          ...errorFields(error),
        });
      }
      ctx.status = failure.status;
      for (const [name, value] of Object.entries(failure.headers)) ctx.set(name, value);
      ctx.body = failure.body();
    } finally {
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.state.administrator !== undefined) {
        audit(
          `management: ${ctx.state.administrator} ${ctx.method} ${ctx.path} → ${ctx.status} (${ctx.state.operation === undefined ? `generation ${store.running().generation}` : `operation ${ctx.state.operation}`})`,
        );
      }
    }
  });
  app.use(refuseForgedWrites);
  app.use(authenticateAdministrators(() => store.running().config.management?.administrators ?? []));
  app.use(router.routes());
  // Not `throw: true`: a thrown 405 would lose the Allow header RFC 9110 requires (the first middleware adds the body).
  app.use(router.allowedMethods());
  return app;
}
