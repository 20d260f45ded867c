import { methodTable } from '../../../src/mcp/methods/index.js';
import { Dispatcher } from '../../../src/mcp/protocol/dispatcher.js';
import type { MethodContext, SessionView } from '../../../src/mcp/protocol/method.js';
import { findRevision } from '../../../src/mcp/protocol/revisions.js';
import { ToolRegistry } from '../../../src/mcp/tools/registry.js';
import type { ToolOperation } from '../../../src/mcp/types.js';
import { type LoggedLine, recordingLogger } from '../../doubles/logger.js';
import { FakeCaller, MutableCatalog, sampleOperations } from '../../doubles/mcp.js';

export const dispatcher = new Dispatcher(methodTable);

export interface TestContext {
  ctx: MethodContext;
  caller: FakeCaller;
  logs: LoggedLine[];
  session: SessionView;
}

/** A method context over the sample catalog and a fake gateway caller, without HTTP. */
export function methodContext(
  options: { revision?: string; scopes?: string[]; ops?: ToolOperation[]; pageSize?: number } = {},
): TestContext {
  const caller = new FakeCaller();
  const logged = recordingLogger();
  const session: SessionView = {
    id: 's1',
    initialized: false,
    async markInitialized() {
      (this as { initialized: boolean }).initialized = true;
    },
  };
  const ctx: MethodContext = {
    revision: findRevision(options.revision ?? '2025-11-25')!,
    subject: {
      sub: 'alice',
      clientId: 'c1',
      scopes: options.scopes ?? ['read:courses-work', 'write:courses-work'],
    },
    session,
    tools: new ToolRegistry(new MutableCatalog(options.ops ?? sampleOperations())),
    caller,
    serverInfo: { name: 'portcullis', version: '0.1.0' },
    instructions: undefined,
    pageSize: options.pageSize ?? 100,
    logger: logged.logger,
  };
  return { ctx, caller, logs: logged.lines, session };
}

export function request(method: string, params: Record<string, unknown> = {}, id: number | string = 1) {
  return { kind: 'request' as const, id, method, params };
}
