import type { OperationConfig } from './schema.js';

/** An operation at an API's root with nothing declared of it: the endpoints of GraphQL and MCP APIs. */
export function rootOperation(id: string, method: OperationConfig['method']): OperationConfig {
  return {
    id,
    method,
    urlTemplate: '/',
    templateParameters: [],
    queryParameters: [],
    headerParameters: [],
    responses: [],
  };
}
