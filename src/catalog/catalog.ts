import type { OperationDefinition } from '../policy/shared/operation-definition.js';
import type { ImportedResponse, SoapMatch } from './importers/model.js';
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
  /** The responses its definition declares (status, media types, schemas, examples): mock-response answers from them. */
  readonly responses: readonly ImportedResponse[];
  /** Everything its definition declares: what the validation policies check requests and responses against. */
  readonly definition: OperationDefinition;
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

export type ApiType = 'http' | 'soap' | 'websocket' | 'graphql';

export interface CatalogApi<Pipeline> {
  readonly id: string;
  readonly name: string;
  readonly urlSuffix: string;
  readonly serviceUrl: string;
  /**
   * `soap`: operations are matched by SOAP action or body element, not by method and template. `websocket`: one
   * operation, onHandshake (`GET /`), whose inbound pipeline runs on the opening handshake; Envoy carries the
   * upgraded connection. `graphql`: a POST with a JSON body or a GET with `?query=` to the API's root (the operations
   * `graphql-post` and `graphql-get`); anything else matches no operation.
   */
  readonly type: ApiType;
  /** Lower-case host names; empty means every host. */
  readonly hostnames: readonly string[];
  readonly productIds: readonly string[];
  readonly operations: readonly CatalogOperation<Pipeline>[];
  readonly access: ApiAccess;
  /** Set when the API is a version of a header- or query-versioned set, which shares its URL suffix. */
  readonly version?: ApiVersionSelector | undefined;
  /** The API's pipeline without an operation (global → API): runs on-error for unmatched operations. */
  readonly apiPipeline: Pipeline;
  /** The same with a product's scope (global → product → API). */
  readonly productApiPipelines: ReadonlyMap<string, Pipeline>;
}

/**
 * How a request names the version of an API whose versions share one URL suffix (API Management's Header and Query
 * versioning schemes): the header or query parameter `key` carries the version `name`. A request that carries none
 * (or an empty one) is for the version named "" (API Management's Original version).
 */
export interface ApiVersionSelector {
  readonly by: 'header' | 'query';
  readonly key: string;
  readonly name: string;
}

/** What the request says besides its method, path and query, that matching may need. */
export interface RequestHints {
  /** SOAP: the SOAPAction header and the Content-Type, which tell a SOAP operation. */
  readonly soapAction?: string | undefined;
  readonly contentType?: string | undefined;
  /** A request header by lower-case name (its first value): the version of a header-versioned set. */
  readonly header?: ((name: string) => string | undefined) | undefined;
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
  /**
   * The path is under the URL suffix that versions of a header- or query-versioned set share, but the request names
   * a version the set does not have (or none, and the set has no version ""): 404, never another API.
   */
  | {
      readonly kind: 'no-version';
      readonly urlSuffix: string;
      readonly by: 'header' | 'query';
      readonly key: string;
      readonly requested: string | undefined;
    }
  | { readonly kind: 'no-api' };

export interface ApiInit<Pipeline> {
  readonly id: string;
  readonly name?: string;
  readonly urlSuffix: string;
  readonly serviceUrl: string;
  readonly type?: ApiType;
  readonly hostnames?: readonly string[];
  readonly productIds?: readonly string[];
  readonly access?: ApiAccess;
  readonly version?: ApiVersionSelector | undefined;
  readonly apiPipeline: Pipeline;
  readonly productApiPipelines?: ReadonlyMap<string, Pipeline>;
  readonly operations: readonly {
    id: string;
    method: string;
    urlTemplate: string;
    pipeline: Pipeline;
    productPipelines?: ReadonlyMap<string, Pipeline>;
    soap?: SoapMatch | undefined;
    responses?: readonly ImportedResponse[] | undefined;
    definition?: OperationDefinition | undefined;
  }[];
}

/** The definition of an operation given without one: nothing declared. */
const NO_PARAMETERS = { templateParameters: [], queryParameters: [], headerParameters: [] } as const;

const openAccess: ApiAccess = {
  subscriptionRequired: false,
  keyHeader: 'Ocp-Apim-Subscription-Key',
  keyQuery: 'subscription-key',
};

/**
 * What a URL suffix on some hosts leads to: one API, or the versions of a header- or query-versioned set that share
 * it, by version name.
 */
type SuffixEntry<Pipeline> = {
  readonly urlSuffix: string;
  readonly hostnames: readonly string[];
} & (
  | { readonly kind: 'api'; readonly api: CatalogApi<Pipeline> }
  | {
      readonly kind: 'versions';
      readonly by: 'header' | 'query';
      readonly key: string;
      readonly byName: Map<string, CatalogApi<Pipeline>>;
    }
);

export class Catalog<Pipeline> {
  readonly apis: readonly CatalogApi<Pipeline>[];
  /** Longest suffix first, so "v1/courses" is tried before "v1"; host-bound entries before catch-all ones. */
  private readonly entries: readonly SuffixEntry<Pipeline>[];

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
        ...(api.version ? { version: api.version } : {}),
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
            responses: operation.responses ?? [],
            definition: operation.definition ?? { ...NO_PARAMETERS, responses: operation.responses ?? [] },
          }))
          .sort((a, b) => b.template.specificity - a.template.specificity),
      }))
      .sort((a, b) => b.urlSuffix.length - a.urlSuffix.length || b.hostnames.length - a.hostnames.length);
    this.entries = suffixEntries(this.apis);
  }

  /**
   * `path` is the request's path without the query string, normalised (`normalizeRequestPath`) and still
   * percent-encoded: the engine forwards this same path, so the operation matched is the one the backend serves.
   * The API is the one whose URL suffix the path is under (the longest); when versions of a header- or
   * query-versioned set share that suffix, the version the request names picks one of them (`hints.header`).
   * For a SOAP API the `hints` (SOAPAction header, Content-Type) pick the operation; when they cannot, the
   * result asks for the body (`soap-body`) and `matchSoapBody` finishes the match.
   */
  match(
    host: string,
    method: string,
    path: string,
    query: URLSearchParams,
    hints: RequestHints = {},
  ): MatchResult<Pipeline> {
    const hostname = host.toLowerCase().replace(/:\d+$/, '');
    for (const entry of this.entries) {
      if (entry.hostnames.length > 0 && !entry.hostnames.includes(hostname)) continue;
      if (!underSuffix(path, entry.urlSuffix)) continue;
      if (entry.kind === 'api') return this.matchIn(entry.api, method, path, query, hints)!;
      const requested =
        entry.by === 'header' ? hints.header?.(entry.key.toLowerCase()) : query.get(entry.key);
      const api = entry.byName.get(requested ?? '');
      if (!api) {
        const { urlSuffix, by, key } = entry;
        return { kind: 'no-version', urlSuffix, by, key, requested: requested ?? undefined };
      }
      return this.matchIn(api, method, path, query, hints)!;
    }
    return { kind: 'no-api' };
  }

  /**
   * The match for a request whose API the operator named (the Envoy route it took: contract.ts `apiRouteNamePrefix`),
   * whatever its host. The path must still lie under the API's URL suffix, which is taken off as for any request.
   * A version of a header- or query-versioned set is matched as named: the operator's route told the versions apart.
   */
  matchNamed(
    apiId: string,
    method: string,
    path: string,
    query: URLSearchParams,
    hints: RequestHints = {},
  ):
    | MatchResult<Pipeline>
    | { readonly kind: 'unknown-api' }
    | { readonly kind: 'outside-suffix'; readonly urlSuffix: string } {
    const api = this.apis.find((candidate) => candidate.id === apiId);
    if (!api) return { kind: 'unknown-api' };
    return (
      this.matchIn(api, method, path, query, hints) ?? { kind: 'outside-suffix', urlSuffix: api.urlSuffix }
    );
  }

  /** The match within one API, or undefined when the path is not under its URL suffix. */
  private matchIn(
    api: CatalogApi<Pipeline>,
    method: string,
    path: string,
    query: URLSearchParams,
    hints: RequestHints,
  ): MatchResult<Pipeline> | undefined {
    if (!underSuffix(path, api.urlSuffix)) return undefined;
    const apiPath = path.slice(api.urlSuffix.length + 1) || '/';
    const wanted = method.toUpperCase();
    if (api.type === 'soap') return this.matchSoap(api, apiPath, wanted, hints);
    if (api.type === 'graphql' && !isGraphqlRequest(wanted, query, hints))
      return { kind: 'no-operation', api, apiPath };
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
    hints: RequestHints,
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

/**
 * Whether a request has a GraphQL request's shape (GraphQL over HTTP): a GET carries the query in `?query=`, a POST
 * a JSON body (application/json, or the media types of the GraphQL-over-HTTP draft).
 */
function isGraphqlRequest(method: string, query: URLSearchParams, hints: RequestHints): boolean {
  if (method === 'GET') return query.has('query');
  if (method !== 'POST') return false;
  const type = (hints.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type === 'application/graphql+json';
}

function underSuffix(path: string, urlSuffix: string): boolean {
  return path === `/${urlSuffix}` || path.startsWith(`/${urlSuffix}/`);
}

/**
 * The APIs by URL suffix and hosts, in the order `apis` has them. The versions of a header- or query-versioned set
 * share one entry (the configuration's checks let no other API share their suffix); should two versions have one
 * name, the first wins, as the first of two APIs on one suffix would.
 */
function suffixEntries<Pipeline>(apis: readonly CatalogApi<Pipeline>[]): SuffixEntry<Pipeline>[] {
  const entries: SuffixEntry<Pipeline>[] = [];
  for (const api of apis) {
    const { urlSuffix, hostnames, version } = api;
    if (!version) {
      entries.push({ kind: 'api', urlSuffix, hostnames, api });
      continue;
    }
    const shared = entries.find(
      (entry): entry is Extract<SuffixEntry<Pipeline>, { kind: 'versions' }> =>
        entry.kind === 'versions' &&
        entry.urlSuffix === urlSuffix &&
        entry.by === version.by &&
        entry.key === version.key &&
        sameHosts(entry.hostnames, hostnames),
    );
    if (shared) {
      if (!shared.byName.has(version.name)) shared.byName.set(version.name, api);
      continue;
    }
    entries.push({
      kind: 'versions',
      urlSuffix,
      hostnames,
      by: version.by,
      key: version.key,
      byName: new Map([[version.name, api]]),
    });
  }
  return entries;
}

function sameHosts(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join(',') === [...b].sort().join(',');
}
