import type { GatewayConfig, OperationConfig } from '../config/schema.js';
import type { ToolCatalog, ToolOperation, ToolParameter } from '../mcp/index.js';

type ParameterConfig = OperationConfig['queryParameters'][number];

/** What the catalog is made from: the APIs and the products that publish them. */
export type CatalogConfig = Pick<GatewayConfig, 'apis' | 'products'>;

/** The MCP endpoint's catalog of a running service, which a configuration reload replaces. */
export interface ConfigToolCatalog extends ToolCatalog {
  /**
   * Makes the catalog that of `config`. Listeners are called only when the operations differ from the current
   * ones (a reload that changed policies alone leaves the tool list, and every MCP session, untouched).
   * Returns whether they did.
   */
  replace(config: CatalogConfig): boolean;
}

function toolParameter(parameter: ParameterConfig): ToolParameter {
  return {
    name: parameter.name,
    required: parameter.required,
    schema: { type: parameter.type },
    ...(parameter.description ? { description: parameter.description } : {}),
  };
}

/**
 * Every operation of every API, with the products that grant it (none for an API in no product: the endpoint
 * does not serve those). Frozen: the endpoint compiles its tools from one version and only reads it.
 */
export function toolOperations(config: CatalogConfig): readonly ToolOperation[] {
  const productsOf = new Map<string, string[]>();
  for (const product of config.products) {
    for (const apiId of product.apis) productsOf.set(apiId, [...(productsOf.get(apiId) ?? []), product.id]);
  }
  return Object.freeze(
    // An MCP server API's tools are its server's (mcp/upstream/), not its endpoint's operations; a WebSocket API's
    // one operation is its opening handshake, which a tool call (one request, one answer) cannot make; a GraphQL
    // API's one endpoint takes any query of its schema, which no fixed tool input describes.
    config.apis.flatMap((api) =>
      (api.type === 'mcp' || api.type === 'websocket' || api.type === 'graphql' ? [] : api.operations).map(
        (operation): ToolOperation =>
          Object.freeze({
            apiId: api.id,
            apiName: api.name ?? api.id,
            productIds: productsOf.get(api.id) ?? [],
            ...(operation.id ? { operationId: operation.id } : {}),
            method: operation.method,
            urlTemplate: operation.urlTemplate,
            // Declared template parameters keep their type (the example's `{id}` is an integer); the endpoint makes
            // each undeclared variable a required string.
            templateParameters: operation.templateParameters.map(toolParameter),
            queryParameters: operation.queryParameters.map(toolParameter),
            headerParameters: operation.headerParameters.map(toolParameter),
            ...(operation.requestBody ? { requestBodySchema: operation.requestBody } : {}),
            ...(operation.displayName ? { summary: operation.displayName } : {}),
            ...(operation.description ? { description: operation.description } : {}),
          }),
      ),
    ),
  );
}

/**
 * The MCP endpoint's view of the configured gateway, starting from `config`. `replace` swaps in the operations of
 * a reloaded configuration as one value, so a request sees either the old list or the new one, never a mix.
 */
export function configToolCatalog(config: CatalogConfig): ConfigToolCatalog {
  let operations = toolOperations(config);
  // Operations are plain data (strings, arrays, JSON schemas): their JSON text compares them whole.
  let fingerprint = JSON.stringify(operations);
  const listeners = new Set<() => void>();
  return {
    operations: () => operations,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    replace(next) {
      const replacement = toolOperations(next);
      const replacementFingerprint = JSON.stringify(replacement);
      if (replacementFingerprint === fingerprint) return false;
      operations = replacement;
      fingerprint = replacementFingerprint;
      for (const listener of [...listeners]) listener();
      return true;
    },
  };
}
