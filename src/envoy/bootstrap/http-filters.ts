/**
 * The HTTP filters of the gateway listeners, in order: ext_proc to the engine, the header mutation filter where
 * routes skip the engine, the dynamic forward proxy for backends a policy names by URL, and the router.
 */

import type {
  DnsCacheConfig,
  DynamicForwardProxyFilter,
  ExtProcFilter,
  HeaderMutationFilter,
  HttpFilter,
  MatchedExtProcFilter,
  PerFilterConfig,
  RouterFilter,
} from '../config-types.js';
import {
  engineClusterName,
  maxMessageTimeoutMs,
  requestAttributes,
  responseAttributes,
  responsePhaseMetadata,
  upstreamTimeoutHeader,
} from '../contract.js';
import { type BootstrapPlan, limitsOf } from './plan.js';
import { escapeRegex, seconds } from './values.js';

const extProcFilterName = 'envoy.filters.http.ext_proc';

/** The DNS cache of the dynamic forward proxy: its filter and its clusters (clusters.ts) must name the same one. */
export const dnsCacheConfig: DnsCacheConfig = {
  name: 'portcullis_dynamic_backends',
  dns_lookup_family: 'V4_PREFERRED',
};

export function extProcFilter(
  plan: BootstrapPlan,
  /** Attributes sent besides the engine's own (an Envoy Portcullis did not configure names its routes). */
  extraRequestAttributes: readonly string[] = [],
): ExtProcFilter {
  return {
    name: extProcFilterName,
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor',
      grpc_service: { envoy_grpc: { cluster_name: engineClusterName } },
      // Fail closed: a request the engine could not see must not reach a backend unchecked.
      failure_mode_allow: false,
      message_timeout: seconds(plan.engine.messageTimeoutMs),
      // Slow policy work asks for more (override_message_timeout) up to this; see maxMessageTimeoutMs.
      max_message_timeout: seconds(maxMessageTimeoutMs(limitsOf(plan))),
      // Request headers only by default; the engine asks per request for what its pipeline needs.
      allow_mode_override: true,
      processing_mode: {
        request_header_mode: 'SEND',
        response_header_mode: 'SKIP',
        request_body_mode: 'NONE',
        response_body_mode: 'NONE',
        request_trailer_mode: 'SKIP',
        response_trailer_mode: 'SKIP',
      },
      request_attributes: [...Object.values(requestAttributes), ...extraRequestAttributes],
      response_attributes: Object.values(responseAttributes),
      // :method and :authority are routing headers: set-method and base URLs need them.
      mutation_rules: {
        allow_all_routing: true,
        allow_expression: { regex: `^${escapeRegex(upstreamTimeoutHeader)}$` },
        disallow_is_error: true,
      },
    },
  };
}

export function gatewayHttpFilters(plan: BootstrapPlan): HttpFilter[] {
  // The header mutation filter strips internal headers where ext_proc is skipped (engine-bypass.ts). It is there
  // whether or not an API skips the engine, at the cost of a lookup per request: the listener must not depend on
  // the APIs, or adding the first policy-less API would replace the listener and drain its connections
  // (dynamic-resources.ts) where only its routes change.
  return [
    responsePhaseOnlyOnFailure(extProcFilter(plan)),
    headerMutationFilter(),
    dynamicForwardProxyFilter(),
    routerFilter(),
  ];
}

/**
 * ext_proc, skipped on the response path when the engine said (dynamic metadata, contract.ts) it wants the response
 * only if the backend failed and the answer is below 500. An operation whose only use of the response is on-error
 * (the spec's sample policy) would otherwise cost a message each way per request for the rare answer on-error
 * acts on: Envoy's own reply for a backend it could not reach or that timed out (502/504 here, local_reply_config),
 * or a backend's 5xx (which the engine tells apart by `response.code_details`). The matcher is evaluated on the
 * request headers first, where the response's status is not yet there, and again on the response headers.
 */
function responsePhaseOnlyOnFailure(filter: ExtProcFilter): MatchedExtProcFilter {
  return {
    name: filter.name,
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.common.matching.v3.ExtensionWithMatcher',
      // The engine's answer may set the metadata the matcher reads.
      extension_config: {
        ...filter,
        typed_config: {
          ...filter.typed_config,
          metadata_options: { receiving_namespaces: { untyped: [responsePhaseMetadata.namespace] } },
        },
      },
      // Two levels, not an and_matcher: the metadata is read as soon as the matcher is, and on the request path it
      // is not set yet, which would end the match there for good. The status is unavailable until the response,
      // which keeps the outer match open until then.
      xds_matcher: {
        matcher_list: {
          matchers: [
            {
              predicate: {
                single_predicate: {
                  input: {
                    name: 'response-status',
                    typed_config: {
                      '@type': 'type.googleapis.com/envoy.type.matcher.v3.HttpResponseHeaderMatchInput',
                      header_name: ':status',
                    },
                  },
                  // A regex here must match the whole value (`^[1-4]` matches no status).
                  value_match: { safe_regex: { regex: '[1-4][0-9][0-9]', google_re2: {} } },
                },
              },
              on_match: {
                matcher: {
                  matcher_list: {
                    matchers: [
                      {
                        predicate: {
                          single_predicate: {
                            input: {
                              name: 'response-phase',
                              typed_config: {
                                '@type':
                                  'type.googleapis.com/envoy.extensions.matching.common_inputs.network.v3.DynamicMetadataInput',
                                filter: responsePhaseMetadata.namespace,
                                path: [{ key: responsePhaseMetadata.key }],
                              },
                            },
                            custom_match: {
                              name: 'only-on-failure',
                              typed_config: {
                                '@type':
                                  'type.googleapis.com/envoy.extensions.matching.input_matchers.metadata.v3.Metadata',
                                value: { string_match: { exact: responsePhaseMetadata.onlyOnFailure } },
                              },
                            },
                          },
                        },
                        on_match: {
                          action: {
                            name: 'skip',
                            typed_config: {
                              '@type':
                                'type.googleapis.com/envoy.extensions.filters.common.matcher.action.v3.SkipFilter',
                            },
                          },
                        },
                      },
                    ],
                  },
                },
              },
            },
          ],
        },
      },
    },
  };
}

function headerMutationFilter(): HeaderMutationFilter {
  return {
    name: 'envoy.filters.http.header_mutation',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation',
    },
  };
}

export function dynamicForwardProxyFilter(): DynamicForwardProxyFilter {
  return {
    name: 'envoy.filters.http.dynamic_forward_proxy',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.dynamic_forward_proxy.v3.FilterConfig',
      dns_cache_config: dnsCacheConfig,
    },
  };
}

export function routerFilter(): RouterFilter {
  return {
    name: 'envoy.filters.http.router',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router',
      suppress_envoy_headers: true,
    },
  };
}

/** On a route that skips ext_proc: no policy runs in front of it. */
export const extProcDisabled: PerFilterConfig = {
  [extProcFilterName]: {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute',
    disabled: true,
  },
};
