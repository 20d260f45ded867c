import type { SoapMatch } from './importers/model.js';
import { firstBodyElement, matchSoapOperation, needsBody, requestAction } from './importers/soap-match.js';
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
  /** The pipeline for a call that belongs to no product. */
  readonly pipeline: Pipeline;
  /** The pipeline for a call that belongs to a product (by the subscription's scope, or an open product). */
  readonly productPipelines: ReadonlyMap<string, Pipeline>;
  /** For a SOAP API: how this operation is told apart from the others (all are `POST /`). */
  readonly soap?: SoapMatch;
}

/** Who may call an API, and where its subscription key travels. */
export interface ApiAccess {
  /** Whether a call without a key is refused when no open product contains the API. */
  readonly subscriptionRequired: boolean;
  readonly keyHeader: string;
  readonly keyQuery: string;
  /** The product that admits calls without a key, if any. */
  readonly openProductId?: string | undefined;
}

export interface CatalogApi<Pipeline> {
  readonly id: string;
  readonly name: string;
  readonly urlSuffix: string;
  readonly serviceUrl: string;
  /** `soap`: operations are matched by SOAP action or body element, not by method and template. */
  readonly type: 'http' | 'soap';
  /** Lower-case host names; empty means every host. */
  readonly hostnames: readonly string[];
  readonly productIds: readonly string[];
  readonly operations: readonly CatalogOperation<Pipeline>[];
  readonly access: ApiAccess;
  /** The API's pipeline without an operation (global → API): runs on-error for unmatched operations. */
  readonly apiPipeline: Pipeline;
  /** The same with a product's scope (global → product → API). */
  readonly productApiPipelines: ReadonlyMap<string, Pipeline>;
}

export type MatchResult<Pipeline> =
  | {
      readonly kind: 'operation';
      readonly api: CatalogApi<Pipeline>;
      readonly operation: CatalogOperation<Pipeline>;
      /** The path after the URL suffix, starting with "/" (normalised, still percent-encoded). */
      readonly apiPath: string;
      readonly parameters: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'no-operation'; readonly api: CatalogApi<Pipeline>; readonly apiPath: string }
  /** A SOAP API whose operation is known only from the request body's first element. */
  | {
      readonly kind: 'soap-body';
      readonly api: CatalogApi<Pipeline>;
      readonly apiPath: string;
      readonly action?: string;
    }
  | { readonly kind: 'no-api' };

export interface ApiInit<Pipeline> {
  readonly id: string;
  readonly name?: string;
  readonly urlSuffix: string;
  readonly serviceUrl: string;
  readonly type?: 'http' | 'soap';
  readonly hostnames?: readonly string[];
  readonly productIds?: readonly string[];
  readonly access?: ApiAccess;
  readonly apiPipeline: Pipeline;
  readonly productApiPipelines?: ReadonlyMap<string, Pipeline>;
  readonly operations: readonly {
    id: string;
    method: string;
    urlTemplate: string;
    pipeline: Pipeline;
    productPipelines?: ReadonlyMap<string, Pipeline>;
    soap?: SoapMatch | undefined;
  }[];
}

const openAccess: ApiAccess = {
  subscriptionRequired: false,
  keyHeader: 'Ocp-Apim-Subscription-Key',
  keyQuery: 'subscription-key',
};

export class Catalog<Pipeline> {
  readonly apis: readonly CatalogApi<Pipeline>[];

  constructor(apis: readonly ApiInit<Pipeline>[]) {
    this.apis = apis
      .map((api) => ({
        id: api.id,
        name: api.name ?? api.id,
        urlSuffix: api.urlSuffix,
        serviceUrl: api.serviceUrl,
        type: api.type ?? 'http',
        hostnames: (api.hostnames ?? []).map((host) => host.toLowerCase()),
        productIds: api.productIds ?? [],
        access: api.access ?? openAccess,
        apiPipeline: api.apiPipeline,
        productApiPipelines: api.productApiPipelines ?? new Map(),
        operations: api.operations
          .map((operation) => ({
            id: operation.id,
            method: operation.method.toUpperCase(),
            template: compileUrlTemplate(operation.urlTemplate),
            pipeline: operation.pipeline,
            productPipelines: operation.productPipelines ?? new Map(),
            ...(operation.soap ? { soap: operation.soap } : {}),
          }))
          .sort((a, b) => b.template.specificity - a.template.specificity),
      }))
      // Longest suffix first, so "v1/courses" is tried before "v1"; host-bound APIs before catch-all ones.
      .sort((a, b) => b.urlSuffix.length - a.urlSuffix.length || b.hostnames.length - a.hostnames.length);
  }

  /**
   * `path` is the request's path without the query string, normalised (`normalizeRequestPath`) and still
   * percent-encoded: the engine forwards this same path, so the operation matched is the one the backend serves.
   * For a SOAP API the `soap` hints (SOAPAction header, Content-Type) pick the operation; when they cannot, the
   * result asks for the body (`soap-body`) and `matchSoapBody` finishes the match.
   */
  match(
    host: string,
    method: string,
    path: string,
    query: URLSearchParams,
    soap: { soapAction?: string | undefined; contentType?: string | undefined } = {},
  ): MatchResult<Pipeline> {
    const hostname = host.toLowerCase().replace(/:\d+$/, '');
    for (const api of this.apis) {
      if (api.hostnames.length > 0 && !api.hostnames.includes(hostname)) continue;
      const match = this.matchIn(api, method, path, query, soap);
      if (match) return match;
    }
    return { kind: 'no-api' };
  }

  /**
   * The match for a request whose API the operator named (the Envoy route it took: contract.ts `apiRouteNamePrefix`),
   * whatever its host. The path must still lie under the API's URL suffix, which is taken off as for any request.
   */
  matchNamed(
    apiId: string,
    method: string,
    path: string,
    query: URLSearchParams,
    soap: { soapAction?: string | undefined; contentType?: string | undefined } = {},
  ):
    | MatchResult<Pipeline>
    | { readonly kind: 'unknown-api' }
    | { readonly kind: 'outside-suffix'; readonly urlSuffix: string } {
    const api = this.apis.find((candidate) => candidate.id === apiId);
    if (!api) return { kind: 'unknown-api' };
    return (
      this.matchIn(api, method, path, query, soap) ?? { kind: 'outside-suffix', urlSuffix: api.urlSuffix }
    );
  }

  /** The match within one API, or undefined when the path is not under its URL suffix. */
  private matchIn(
    api: CatalogApi<Pipeline>,
    method: string,
    path: string,
    query: URLSearchParams,
    soap: { soapAction?: string | undefined; contentType?: string | undefined },
  ): MatchResult<Pipeline> | undefined {
    const prefix = `/${api.urlSuffix}`;
    if (path !== prefix && !path.startsWith(`${prefix}/`)) return undefined;
    const apiPath = path.slice(prefix.length) || '/';
    const wanted = method.toUpperCase();
    if (api.type === 'soap') return this.matchSoap(api, apiPath, wanted, soap);
    for (const operation of api.operations) {
      if (operation.method !== wanted) continue;
      const parameters = operation.template.match(apiPath, query);
      if (parameters) return { kind: 'operation', api, operation, apiPath, parameters };
    }
    return { kind: 'no-operation', api, apiPath };
  }

  /** SOAP pass-through: every operation is a POST, told apart by action, then by the body's first element. */
  private matchSoap(
    api: CatalogApi<Pipeline>,
    apiPath: string,
    method: string,
    hints: { soapAction?: string | undefined; contentType?: string | undefined },
  ): MatchResult<Pipeline> {
    if (method !== 'POST') return { kind: 'no-operation', api, apiPath };
    const action = requestAction(hints);
    if (needsBody(api.operations, action))
      return { kind: 'soap-body', api, apiPath, ...(action ? { action } : {}) };
    return soapOperation(api, apiPath, matchSoapOperation(api.operations, { action }));
  }

  /** Finishes a `soap-body` match once the request body is known. */
  matchSoapBody(
    match: Extract<MatchResult<Pipeline>, { kind: 'soap-body' }>,
    body: Buffer,
  ): Extract<MatchResult<Pipeline>, { kind: 'operation' | 'no-operation' }> {
    const bodyElement = firstBodyElement(body.toString('utf8'));
    const operation = matchSoapOperation(match.api.operations, { action: match.action, bodyElement });
    return soapOperation(match.api, match.apiPath, operation) as Extract<
      MatchResult<Pipeline>,
      { kind: 'operation' | 'no-operation' }
    >;
  }
}

function soapOperation<Pipeline>(
  api: CatalogApi<Pipeline>,
  apiPath: string,
  operation: CatalogOperation<Pipeline> | undefined,
): MatchResult<Pipeline> {
  return operation
    ? { kind: 'operation', api, operation, apiPath, parameters: {} }
    : { kind: 'no-operation', api, apiPath };
}
