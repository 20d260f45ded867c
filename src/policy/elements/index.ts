/**
 * The element registry: every policy element Portcullis runs, one file each, and the reference elements it
 * only declares. `base` is structural (handled by the loader's scope stitching) and so has no entry here.
 */
import type { DeclaredElement, ElementDefinition } from '../element.js';
import { authenticationBasic } from './authentication-basic.js';
import { authenticationCertificate } from './authentication-certificate.js';
import { authenticationManagedIdentity } from './authentication-managed-identity.js';
import { azureOpenAiEmitTokenMetric } from './azure-openai-emit-token-metric.js';
import { azureOpenAiSemanticCacheLookup } from './azure-openai-semantic-cache-lookup.js';
import { azureOpenAiSemanticCacheStore } from './azure-openai-semantic-cache-store.js';
import { azureOpenAiTokenLimit } from './azure-openai-token-limit.js';
import { cacheLookup } from './cache-lookup.js';
import { cacheLookupValue } from './cache-lookup-value.js';
import { cacheRemoveValue } from './cache-remove-value.js';
import { cacheStore } from './cache-store.js';
import { cacheStoreValue } from './cache-store-value.js';
import { checkHeader } from './check-header.js';
import { choose } from './choose.js';
import { cors } from './cors.js';
import { DECLARED_ELEMENTS } from './declared.js';
import { emitMetric } from './emit-metric.js';
import { findAndReplace } from './find-and-replace.js';
import { forwardRequest } from './forward-request.js';
import { getAuthorizationContext } from './get-authorization-context.js';
import { includeFragment } from './include-fragment.js';
import { ipFilter } from './ip-filter.js';
import { jsonToXmlElement } from './json-to-xml.js';
import { jsonp } from './jsonp.js';
import { limitConcurrency } from './limit-concurrency.js';
import { llmContentSafety } from './llm-content-safety.js';
import { llmEmitTokenMetric } from './llm-emit-token-metric.js';
import { llmSemanticCacheLookup } from './llm-semantic-cache-lookup.js';
import { llmSemanticCacheStore } from './llm-semantic-cache-store.js';
import { llmTokenLimit } from './llm-token-limit.js';
import { logToEventhub } from './log-to-eventhub.js';
import { mockResponse } from './mock-response.js';
import { quota } from './quota.js';
import { quotaByKey } from './quota-by-key.js';
import { rateLimit } from './rate-limit.js';
import { rateLimitByKey } from './rate-limit-by-key.js';
import { redirectContentUrls } from './redirect-content-urls.js';
import { retry } from './retry.js';
import { returnResponse } from './return-response.js';
import { rewriteUri } from './rewrite-uri.js';
import { sendOneWayRequest } from './send-one-way-request.js';
import { sendRequest } from './send-request.js';
import { setBackendService } from './set-backend-service.js';
import { setBody } from './set-body.js';
import { setHeader } from './set-header.js';
import { setMethod } from './set-method.js';
import { setQueryParameter } from './set-query-parameter.js';
import { setStatus } from './set-status.js';
import { setVariable } from './set-variable.js';
import { trace } from './trace.js';
import { validateAzureAdToken } from './validate-azure-ad-token.js';
import { validateClientCertificate } from './validate-client-certificate.js';
import { validateContent } from './validate-content.js';
import { validateGraphqlRequest } from './validate-graphql-request.js';
import { validateHeaders } from './validate-headers.js';
import { validateJwt } from './validate-jwt.js';
import { validateParameters } from './validate-parameters.js';
import { validateStatusCode } from './validate-status-code.js';
import { wait } from './wait.js';
import { xmlToJsonElement } from './xml-to-json.js';
import { xslTransform } from './xsl-transform.js';

export const ELEMENT_LIST: readonly ElementDefinition[] = [
  setVariable,
  choose,
  setHeader,
  setQueryParameter,
  rewriteUri,
  setMethod,
  setStatus,
  setBody,
  returnResponse,
  mockResponse,
  setBackendService,
  includeFragment,
  trace,
  forwardRequest,
  retry,
  checkHeader,
  ipFilter,
  cors,
  findAndReplace,
  jsonToXmlElement,
  xmlToJsonElement,
  validateJwt,
  cacheLookup,
  cacheStore,
  sendRequest,
  sendOneWayRequest,
  cacheLookupValue,
  cacheStoreValue,
  cacheRemoveValue,
  wait,
  authenticationBasic,
  rateLimit,
  rateLimitByKey,
  quota,
  quotaByKey,
  logToEventhub,
  limitConcurrency,
  llmTokenLimit,
  azureOpenAiTokenLimit,
  llmEmitTokenMetric,
  azureOpenAiEmitTokenMetric,
  jsonp,
  redirectContentUrls,
  emitMetric,
  validateClientCertificate,
  authenticationCertificate,
  llmSemanticCacheLookup,
  llmSemanticCacheStore,
  llmContentSafety,
  azureOpenAiSemanticCacheLookup,
  azureOpenAiSemanticCacheStore,
  authenticationManagedIdentity,
  validateAzureAdToken,
  getAuthorizationContext,
  validateContent,
  validateParameters,
  validateHeaders,
  validateStatusCode,
  xslTransform,
  validateGraphqlRequest,
];

export const ELEMENTS: ReadonlyMap<string, ElementDefinition> = new Map(ELEMENT_LIST.map((e) => [e.name, e]));

export const DECLARED: ReadonlyMap<string, DeclaredElement> = new Map(
  DECLARED_ELEMENTS.map((d) => [d.name, d]),
);
