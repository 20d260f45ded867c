export { createMcpEndpoint, type McpEndpoint, type McpEndpointOptions } from './endpoint.js';
export { productScope } from './tools/registry.js';
export {
  type LoggedNotification,
  type NotificationLog,
  type SessionAttachments,
  type SessionOwner,
  type SessionRecord,
  type SessionStore,
  SessionStoreUnavailableError,
  type StreamLeases,
} from './transport/session-store.js';
export type {
  AccessTokenClaims,
  AccessTokenVerifier,
  GatewayCaller,
  GatewayResponse,
  ServerInfo,
  Subject,
  ToolCallRequest,
  ToolCatalog,
  ToolOperation,
  ToolParameter,
} from './types.js';
export { PREFIX_SEPARATOR } from './upstream/aggregator.js';
export type { UpstreamCatalog, UpstreamRoute, UpstreamRouter, UpstreamServer } from './upstream/types.js';
