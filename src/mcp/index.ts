export { createMcpEndpoint, type McpEndpoint, type McpEndpointOptions } from './endpoint.js';
export { productScope } from './tools/registry.js';
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
