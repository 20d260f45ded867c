import type { GatewayConfig, OperationConfig } from '../config/schema.js';
import type { ToolCatalog, ToolOperation, ToolParameter } from '../mcp/index.js';

type ParameterConfig = OperationConfig['queryParameters'][number];

function toolParameter(parameter: ParameterConfig): ToolParameter {
  return {
    name: parameter.name,
    required: parameter.required,
    schema: { type: parameter.type },
    ...(parameter.description ? { description: parameter.description } : {}),
  };
}

/**
 * The MCP endpoint's view of the configured gateway: every operation of every API that is in at least one
 * product, with the products that grant it. Built once from the loaded configuration (which does not change
 * while the process runs), so `onChange` never fires; a catalog that reloads would call its listeners.
 */
export function configToolCatalog(config: Pick<GatewayConfig, 'apis' | 'products'>): ToolCatalog {
  const productsOf = new Map<string, string[]>();
  for (const product of config.products) {
    for (const apiId of product.apis) productsOf.set(apiId, [...(productsOf.get(apiId) ?? []), product.id]);
  }
  const operations: readonly ToolOperation[] = Object.freeze(
    config.apis.flatMap((api) =>
      api.operations.map(
        (operation): ToolOperation =>
          Object.freeze({
            apiId: api.id,
            apiName: api.name ?? api.id,
            productIds: productsOf.get(api.id) ?? [],
            ...(operation.id ? { operationId: operation.id } : {}),
            method: operation.method,
            urlTemplate: operation.urlTemplate,
            // Template variables carry no schema in the configuration; the endpoint makes each a required string.
            templateParameters: [],
            queryParameters: operation.queryParameters.map(toolParameter),
            headerParameters: operation.headerParameters.map(toolParameter),
            ...(operation.requestBody ? { requestBodySchema: operation.requestBody } : {}),
            ...(operation.displayName ? { summary: operation.displayName } : {}),
            ...(operation.description ? { description: operation.description } : {}),
          }),
      ),
    ),
  );
  return {
    operations: () => operations,
    onChange: () => () => {},
  };
}
