import type { McpMethod } from '../protocol/method.js';
import { initialize } from './initialize.js';
import { loggingSetLevel } from './logging-set-level.js';
import { notificationsCancelled } from './notifications-cancelled.js';
import { notificationsInitialized } from './notifications-initialized.js';
import { ping } from './ping.js';
import { serverDiscover } from './server-discover.js';
import { toolsCall } from './tools-call.js';
import { toolsList } from './tools-list.js';

/** Every MCP method this endpoint serves. A method not listed here is -32601 (or ignored, for notifications). */
export const methods: readonly McpMethod[] = [
  initialize,
  notificationsInitialized,
  notificationsCancelled,
  ping,
  loggingSetLevel,
  serverDiscover,
  toolsList,
  toolsCall,
];

export const methodTable: ReadonlyMap<string, McpMethod> = new Map(methods.map((m) => [m.name, m]));
