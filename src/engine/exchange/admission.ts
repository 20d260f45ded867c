/**
 * The request headers' part of an exchange: which API and operation the request is for (the Envoy route it took, or
 * its host and path), whether it is admitted (subscription key, open product), and the description of it that the
 * policies see.
 */
import { randomUUID } from 'node:crypto';
import type { Catalog, CatalogApi, MatchResult, RequestHints } from '../../catalog/catalog.js';
import { normalizeRequestPath } from '../../catalog/request-path.js';
import type { AccessDecision, SubscriptionDirectory } from '../../catalog/subscriptions.js';
import {
  apiRouteNamePrefix,
  internalHeaderPrefix,
  requestAttributes,
  routeAttributes,
} from '../../envoy/contract.js';
import { UrlModel } from '../../expr/index.js';
import type { MessageHead } from '../../extproc/exchange.js';
import { clientAddress, policyVisibleHeaders } from '../../extproc/header-changes.js';
import { firstHeader, type HeaderChange, type HeaderFields } from '../../extproc/headers.js';
import type { Pipeline, RequestDescription } from '../../policy/index.js';
import { clientCertificate, type TrustStore } from '../client-certificate.js';
import { requestTraceId } from '../exchange-log-fields.js';
import { pathRefusal, type Refusal, routeRefusal, versionRefusal } from './refusals.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A match to one of the configuration's APIs. */
export type ApiMatch = Exclude<MatchResult<Pipeline>, { kind: 'no-version' | 'no-api' }>;
export type OperationMatch = Extract<MatchResult<Pipeline>, { kind: 'operation' }>;

/** What the request line says: method, path and query, authority, scheme. */
export interface RequestLine {
  readonly method: string;
  /** Path and query as the client sent them. */
  readonly rawPath: string;
  readonly authority: string;
  readonly scheme: string;
  /** The path without the query, as the client sent it. */
  readonly rawPathname: string;
  /** The query with its `?`, or "". */
  readonly search: string;
}

export function requestLine(headers: HeaderFields): RequestLine {
  const rawPath = firstHeader(headers, ':path') ?? '/';
  const queryStart = rawPath.indexOf('?');
  return {
    method: firstHeader(headers, ':method') ?? 'GET',
    rawPath,
    authority: firstHeader(headers, ':authority') ?? '',
    scheme: firstHeader(headers, ':scheme') ?? 'http',
    rawPathname: queryStart < 0 ? rawPath : rawPath.slice(0, queryStart),
    search: queryStart < 0 ? '' : rawPath.slice(queryStart),
  };
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The request's ids: the client's `x-request-id` when it is a UUID, else a new one (sent on as `x-request-id` when
 * the client sent none); the trace it belongs to. `strippedHeaders`: the internal headers a client sent, to remove
 * before anything else sees them.
 */
export function requestIdentity(head: MessageHead): {
  readonly requestId: string;
  readonly traceId: string | undefined;
  readonly requestIdHeader: readonly HeaderChange[];
  readonly strippedHeaders: readonly string[];
} {
  const clientRequestId = firstHeader(head.headers, 'x-request-id');
  const requestId =
    clientRequestId && uuidPattern.test(clientRequestId) ? clientRequestId.toLowerCase() : randomUUID();
  return {
    requestId,
    traceId: requestTraceId(head),
    requestIdHeader: clientRequestId ? [] : [{ name: 'x-request-id', value: requestId }],
    strippedHeaders: [...head.headers.keys()].filter((name) => name.startsWith(internalHeaderPrefix)),
  };
}

/** What the path and the route say the request is for. */
export type RouteMatch =
  | { readonly kind: 'refused'; readonly refusal: Refusal }
  /** Envoy routes it; `pathname` is the normalised path, to forward when it differs from the client's. */
  | { readonly kind: 'not-an-api'; readonly pathname: string; readonly pathChanged: boolean }
  | { readonly kind: 'api'; readonly match: ApiMatch; readonly pathname: string };

export function matchRoute(catalog: Catalog<Pipeline>, head: MessageHead, line: RequestLine): RouteMatch {
  const { headers } = head;
  const { rawPathname, search, method } = line;
  // Matched and forwarded alike: the operation whose policy runs is the one the backend resolves.
  const normalized = normalizeRequestPath(rawPathname);
  if (!normalized.ok) return { kind: 'refused', refusal: pathRefusal(normalized) };
  const pathname = normalized.path;
  const hints: RequestHints = {
    soapAction: firstHeader(headers, 'soapaction'),
    contentType: firstHeader(headers, 'content-type'),
    header: (name) => firstHeader(headers, name),
  };
  const routeName = head.attributes.get(routeAttributes.routeName);
  let found: MatchResult<Pipeline>;
  if (typeof routeName === 'string' && routeName.startsWith(apiRouteNamePrefix)) {
    const named = catalog.matchNamed(
      routeName.slice(apiRouteNamePrefix.length),
      method,
      pathname,
      new URLSearchParams(search),
      hints,
    );
    // A route named for an API that cannot serve this request is the operator's mistake: refused, never let
    // through without the API's policies.
    if (named.kind === 'unknown-api' || named.kind === 'outside-suffix')
      return { kind: 'refused', refusal: routeRefusal(routeName, named) };
    found = named;
  } else found = catalog.match(line.authority, method, pathname, new URLSearchParams(search), hints);
  // Envoy's route for the suffix leads to one of the versions' backends: the engine answers, no API matched.
  if (found.kind === 'no-version') return { kind: 'refused', refusal: versionRefusal(found) };
  if (found.kind === 'no-api') return { kind: 'not-an-api', pathname, pathChanged: pathname !== rawPathname };
  return { kind: 'api', match: found, pathname };
}

/** A request for one of the APIs, described for its policies and decided on (admitted or refused). */
export interface AdmittedRequest {
  readonly api: CatalogApi<Pipeline>;
  /** The exchange's own: completed in place once the operation is known (a PipelineRun reads it when made). */
  readonly description: Mutable<RequestDescription>;
  /** The subscription decision for this call. */
  readonly access: AccessDecision;
  /** The request headers as policies first saw them, to compute the mutation. */
  readonly originalHeaders: [string, string][];
  /** Internal headers a client sent, to remove before anything else sees them. */
  readonly strippedHeaders: readonly string[];
  /** The `x-request-id` the engine gives a request that came without one. */
  readonly requestIdHeader: readonly HeaderChange[];
  /** The client asked for `/<suffix>` exactly, without a trailing slash. */
  readonly requestedApiRoot: boolean;
}

/** Describes and decides a request matched to an API; undefined when no URL can be made of it. */
export function admitRequest(
  gateway: { readonly subscriptions?: SubscriptionDirectory; readonly trust?: TrustStore },
  head: MessageHead,
  line: RequestLine,
  route: { readonly match: ApiMatch; readonly pathname: string },
  ids: {
    readonly requestId: string;
    readonly tracing: boolean;
    readonly strippedHeaders: readonly string[];
    readonly requestIdHeader: readonly HeaderChange[];
  },
): AdmittedRequest | undefined {
  const { match, pathname } = route;
  const { scheme, authority, search } = line;
  const originalHeaders = policyVisibleHeaders(head.headers);
  const apiRelativePath = `${pathname.slice(match.api.urlSuffix.length + 1) || '/'}${search}`;
  const url = requestUrl(scheme, authority, apiRelativePath);
  if (!url) return undefined;
  const access = admit(gateway.subscriptions, match.api, url, originalHeaders);
  const keyHeader = match.api.access.keyHeader.toLowerCase();
  // Built field by field rather than with spreads: this runs for every request.
  const description: Mutable<RequestDescription> = {
    method: line.method,
    url,
    // As the client sent it: API Management's OriginalUrl keeps the API's URL suffix (public policies strip
    // `context.Api.Path` from `OriginalUrl.Path` to find the operation's part).
    originalUrl: requestUrl(scheme, authority, `${pathname}${search}`) ?? url,
    // The subscription key is the gateway's: removed before any policy or the backend sees the request.
    headers: originalHeaders.filter(([name]) => name !== keyHeader),
    clientIp: clientAddress(head.attributes.get(requestAttributes.sourceAddress)),
    certificate: clientCertificate(head.attributes, gateway.trust),
    matchedParameters: match.kind === 'operation' ? match.parameters : {},
    api: {
      id: match.api.id,
      name: match.api.name,
      path: `/${match.api.urlSuffix}`,
      serviceUrl: serviceUrlOf(match.api),
    },
    requestId: ids.requestId,
    tracing: ids.tracing,
  };
  if (access.kind === 'admitted') {
    if (access.subscription) description.subscription = access.subscription;
    if (access.user) description.user = access.user;
    if (access.product) description.product = access.product;
  }
  return {
    api: match.api,
    description,
    access,
    originalHeaders,
    strippedHeaders: ids.strippedHeaders,
    requestIdHeader: ids.requestIdHeader,
    requestedApiRoot: pathname === `/${match.api.urlSuffix}`,
  };
}

/**
 * Whether the call is admitted, and as part of which product: by its subscription key (header first, then the
 * query parameter, which is removed from `url`), an open product, or an API that needs no subscription.
 */
function admit(
  directory: SubscriptionDirectory | undefined,
  api: CatalogApi<Pipeline>,
  url: URL,
  originalHeaders: readonly [string, string][],
): AccessDecision {
  const keyHeader = api.access.keyHeader.toLowerCase();
  const headerKey = originalHeaders.find(([name]) => name === keyHeader)?.[1];
  // Without a query there is no key in it (and no need to parse the query into searchParams).
  const queryKey = url.search === '' ? undefined : (url.searchParams.get(api.access.keyQuery) ?? undefined);
  if (queryKey !== undefined) url.searchParams.delete(api.access.keyQuery);
  const key = headerKey ?? queryKey;
  if (!directory) return { kind: 'admitted' };
  return directory.decide(api, key);
}

/** The pipeline of the product this call belongs to, or the product-less one. */
export function forProduct(
  access: AccessDecision,
  pipeline: Pipeline,
  byProduct: ReadonlyMap<string, Pipeline>,
): Pipeline {
  const productId = access.kind === 'admitted' ? access.productId : undefined;
  return (productId === undefined ? undefined : byProduct.get(productId)) ?? pipeline;
}

/** The request is for this operation: completes its description; returns the pipeline that runs. */
export function enterOperation(request: AdmittedRequest, match: OperationMatch): Pipeline {
  const { description } = request;
  description.matchedParameters = match.parameters;
  description.operation = {
    id: match.operation.id,
    method: match.operation.method,
    urlTemplate: match.operation.template.text,
  };
  description.responses = match.operation.responses;
  description.definition = match.operation.definition;
  return forProduct(request.access, match.operation.pipeline, match.operation.productPipelines);
}

/** Each API's `serviceUrl`, parsed once (the catalog checked it is an absolute http(s) URL). */
const parsedServiceUrls = new WeakMap<CatalogApi<Pipeline>, URL>();

/**
 * `context.Api.ServiceUrl`: an IUrl of the API's configured service URL (not the backend a policy may have chosen).
 * A new one per request, as `context.Request.Url` is: a UrlModel is mutable, a request's own.
 */
function serviceUrlOf(api: CatalogApi<Pipeline>): UrlModel {
  let url = parsedServiceUrls.get(api);
  if (url === undefined) {
    url = new URL(api.serviceUrl);
    parsedServiceUrls.set(api, url);
  }
  return UrlModel.parse(url);
}

/** The URL policies see, or undefined when the scheme or authority cannot make one. */
function requestUrl(scheme: string, authority: string, apiRelativePath: string): URL | undefined {
  try {
    return new URL(
      `${scheme}://${authority || 'localhost'}${apiRelativePath.startsWith('/') ? '' : '/'}${apiRelativePath}`,
    );
  } catch {
    return undefined;
  }
}
