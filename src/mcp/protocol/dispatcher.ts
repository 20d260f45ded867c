import { errorFields } from '../../log.js';
import {
  ErrorCode,
  errorMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  McpError,
  type OutboundMessage,
  resultMessage,
} from './jsonrpc.js';
import type { Era, McpMethod, MethodContext } from './method.js';

/** Routes JSON-RPC messages to the method table; the only place that turns thrown errors into JSON-RPC errors. */
export class Dispatcher {
  constructor(private readonly table: ReadonlyMap<string, McpMethod>) {}

  #find(name: string, kind: McpMethod['kind'], ctx: MethodContext): McpMethod | undefined {
    const method = this.table.get(name);
    const era: Era = ctx.revision.stateless ? 'stateless' : 'session';
    return method && method.kind === kind && method.eras.includes(era) ? method : undefined;
  }

  /** Scopes the token lacks for any of these requests (deduplicated, in order). */
  missingScopes(requests: readonly JsonRpcRequest[], ctx: MethodContext): string[] {
    const missing = new Set<string>();
    for (const request of requests) {
      const method = this.#find(request.method, 'request', ctx);
      for (const scope of method?.missingScopes?.(request.params, ctx) ?? []) missing.add(scope);
    }
    return [...missing];
  }

  /** Whether any of these requests may notify before its answer (see `McpMethod.streams`). */
  streams(requests: readonly JsonRpcRequest[], ctx: MethodContext): boolean {
    return requests.some((request) => {
      const method = this.#find(request.method, 'request', ctx);
      return method?.streams?.(request.params, ctx) ?? false;
    });
  }

  knows(name: string, ctx: MethodContext): boolean {
    return this.#find(name, 'request', ctx) !== undefined;
  }

  async request(message: JsonRpcRequest, ctx: MethodContext): Promise<OutboundMessage> {
    const method = this.#find(message.method, 'request', ctx);
    if (!method)
      return errorMessage(message.id, ErrorCode.MethodNotFound, `Method not found: ${message.method}`);
    try {
      return resultMessage(
        message.id,
        await method.handle(message.params, { ...ctx, requestId: message.id }),
      );
    } catch (err) {
      if (err instanceof McpError) return errorMessage(message.id, err.code, err.message, err.data);
      ctx.logger.error(`mcp: ${message.method} failed`, errorFields(err));
      return errorMessage(message.id, ErrorCode.InternalError, 'Internal error');
    }
  }

  /** Notifications never get an answer (JSON-RPC §4.1), so unknown ones and failures are only logged. */
  async notification(message: JsonRpcNotification, ctx: MethodContext): Promise<void> {
    const method = this.#find(message.method, 'notification', ctx);
    if (!method) return;
    try {
      await method.handle(message.params, ctx);
    } catch (err) {
      ctx.logger.error(`mcp: ${message.method} failed`, errorFields(err));
    }
  }
}
