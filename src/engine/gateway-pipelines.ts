import type { CompiledGateway } from '../config/gateway.js';
import type { Pipeline } from '../policy/index.js';

type CatalogApi = CompiledGateway['catalog']['apis'][number];

/**
 * Every pipeline a request of the gateway can run — each API's, each operation's, and each with a product's
 * policy in front — with the API it serves and words that say which it is (`API courses, operation list,
 * product gold`). What the transport checks walk (ext_authz, backend routing). A global or product policy
 * appears in many pipelines: a check that reports by element position names it once.
 */
export function forEachPipeline(
  gateway: CompiledGateway,
  visit: (pipeline: Pipeline, api: CatalogApi, where: string) => void,
): void {
  for (const api of gateway.catalog.apis) {
    visit(api.apiPipeline, api, `API ${api.id}`);
    for (const [product, pipeline] of api.productApiPipelines)
      visit(pipeline, api, `API ${api.id}, product ${product}`);
    for (const operation of api.operations) {
      const where = `API ${api.id}, operation ${operation.id}`;
      visit(operation.pipeline, api, where);
      for (const [product, pipeline] of operation.productPipelines)
        visit(pipeline, api, `${where}, product ${product}`);
    }
  }
}
