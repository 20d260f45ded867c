import { compileUrlTemplate, type UrlTemplate } from './url-template.js';

/**
 * The published APIs as the engine sees them: which API a request is for (host and URL suffix), which operation
 * (method and URL template, most specific first), and what that operation carries (its compiled pipeline, kept
 * opaque here so the catalog does not depend on the policy runtime).
 */

export interface CatalogOperation<Pipeline> {
  readonly id: string;
  readonly method: string;
  readonly template: UrlTemplate;
  readonly pipeline: Pipeline;
}

export interface CatalogApi<Pipeline> {
  readonly id: string;
  readonly name: string;
  readonly urlSuffix: string;
  readonly serviceUrl: string;
  /** Lower-case host names; empty means every host. */
  readonly hostnames: readonly string[];
  readonly productIds: readonly string[];
  readonly operations: readonly CatalogOperation<Pipeline>[];
  /** The API's pipeline without an operation (global → product → API): runs on-error for unmatched operations. */
  readonly apiPipeline: Pipeline;
}

export type MatchResult<Pipeline> =
  | {
      readonly kind: 'operation';
      readonly api: CatalogApi<Pipeline>;
      readonly operation: CatalogOperation<Pipeline>;
      /** The path after the URL suffix, starting with "/" (percent-decoded). */
      readonly apiPath: string;
      readonly parameters: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'no-operation'; readonly api: CatalogApi<Pipeline>; readonly apiPath: string }
  | { readonly kind: 'no-api' };

export interface ApiInit<Pipeline> {
  readonly id: string;
  readonly name?: string;
  readonly urlSuffix: string;
  readonly serviceUrl: string;
  readonly hostnames?: readonly string[];
  readonly productIds?: readonly string[];
  readonly apiPipeline: Pipeline;
  readonly operations: readonly { id: string; method: string; urlTemplate: string; pipeline: Pipeline }[];
}

export class Catalog<Pipeline> {
  readonly apis: readonly CatalogApi<Pipeline>[];

  constructor(apis: readonly ApiInit<Pipeline>[]) {
    this.apis = apis
      .map((api) => ({
        id: api.id,
        name: api.name ?? api.id,
        urlSuffix: api.urlSuffix,
        serviceUrl: api.serviceUrl,
        hostnames: (api.hostnames ?? []).map((host) => host.toLowerCase()),
        productIds: api.productIds ?? [],
        apiPipeline: api.apiPipeline,
        operations: api.operations
          .map((operation) => ({
            id: operation.id,
            method: operation.method.toUpperCase(),
            template: compileUrlTemplate(operation.urlTemplate),
            pipeline: operation.pipeline,
          }))
          .sort((a, b) => b.template.specificity - a.template.specificity),
      }))
      // Longest suffix first, so "v1/courses" is tried before "v1"; host-bound APIs before catch-all ones.
      .sort((a, b) => b.urlSuffix.length - a.urlSuffix.length || b.hostnames.length - a.hostnames.length);
  }

  /** `path` is the request's path without the query string, as received (percent-encoded). */
  match(host: string, method: string, path: string, query: URLSearchParams): MatchResult<Pipeline> {
    const hostname = host.toLowerCase().replace(/:\d+$/, '');
    for (const api of this.apis) {
      if (api.hostnames.length > 0 && !api.hostnames.includes(hostname)) continue;
      const prefix = `/${api.urlSuffix}`;
      if (path !== prefix && !path.startsWith(`${prefix}/`)) continue;
      const apiPath = safeDecode(path.slice(prefix.length) || '/');
      const wanted = method.toUpperCase();
      for (const operation of api.operations) {
        if (operation.method !== wanted) continue;
        const parameters = operation.template.match(apiPath, query);
        if (parameters) return { kind: 'operation', api, operation, apiPath, parameters };
      }
      return { kind: 'no-operation', api, apiPath };
    }
    return { kind: 'no-api' };
  }
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
