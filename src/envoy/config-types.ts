/**
 * The part of Envoy's v3 API that Portcullis writes into a bootstrap, in proto-JSON form: field names as the protos
 * spell them (snake_case, what Envoy's YAML loader reads), durations as `"1.5s"`, enums by name. Only what
 * Portcullis writes is declared: a field is optional where some bootstrap leaves it out, an enum lists the values
 * Portcullis uses (Envoy knows more), and a `typed_config` (a `google.protobuf.Any`) is the one message its
 * `@type` names, chosen by the extension's `name`.
 *
 * Type aliases rather than interfaces: a bootstrap is a JSON document, and an object type alias stays assignable to
 * `Record<string, unknown>`, which the code that walks a bootstrap generically (YAML rendering, the reload
 * transition) takes.
 */

/** A proto `oneof`: exactly one of the fields of `Choices` is set (reading another one gives `undefined`). */
type OneOf<Choices> = {
  [Chosen in keyof Choices]: { readonly [Field in Chosen]: Choices[Chosen] } & {
    readonly [Field in Exclude<keyof Choices, Chosen>]?: never;
  };
}[keyof Choices];

/** `google.protobuf.Duration`: seconds with an `s` suffix. */
export type Duration = `${number}s`;

/**
 * An extension Envoy finds by name with its configuration (`Filter`, `HttpFilter`, `TransportSocket`,
 * `TypedExtensionConfig`, `CustomClusterType`: all the same two fields).
 */
export type TypedExtension<Name extends string, Config> = {
  readonly name: Name;
  readonly typed_config: Config;
};

/**
 * The extension called `name` among `extensions`, typed by that name (filters are looked up by name: where one sits
 * in a chain depends on the plan).
 */
export function extensionNamed<Extension extends { readonly name: string }, Name extends Extension['name']>(
  extensions: readonly Extension[],
  name: Name,
): Extract<Extension, { readonly name: Name }> {
  const found = extensions.find(
    (extension): extension is Extract<Extension, { readonly name: Name }> => extension.name === name,
  );
  if (!found)
    throw new TypeError(
      `no ${name} among ${extensions.map((extension) => extension.name).join(', ') || 'none'}`,
    );
  return found;
}

// --- bootstrap (config.bootstrap.v3) ---

export type Bootstrap = {
  readonly node: { readonly id: string; readonly cluster: string };
  readonly admin: { readonly address: Address };
  readonly layered_runtime?: {
    readonly layers: readonly {
      readonly name: string;
      /** Runtime keys (feature flags) and their values. */
      readonly static_layer: Readonly<Record<string, boolean | number>>;
    }[];
  };
  readonly overload_manager?: { readonly resource_monitors: readonly DownstreamConnectionsMonitor[] };
  readonly static_resources: {
    readonly listeners: readonly Listener[];
    readonly clusters: readonly Cluster[];
  };
};

/**
 * A bootstrap whose listeners and clusters come from files Envoy watches (dynamic-resources.ts): what stays in it
 * changes only with a new Envoy process.
 */
export type DynamicBootstrap = Omit<Bootstrap, 'static_resources'> & {
  readonly dynamic_resources: {
    readonly lds_config: FileConfigSource;
    readonly cds_config: FileConfigSource;
  };
};

/** `config.core.v3.ConfigSource` read from a file, reloaded when a file is moved into its directory. */
export type FileConfigSource = {
  readonly resource_api_version: 'V3';
  readonly path_config_source: {
    readonly path: string;
    readonly watched_directory: { readonly path: string };
  };
};

/** `service.discovery.v3.DiscoveryResponse` as a file: what a file config source holds. */
export type DiscoveryFile = {
  readonly version_info: string;
  readonly resources: readonly Readonly<Record<string, unknown>>[];
};

export type DownstreamConnectionsMonitor = TypedExtension<
  'envoy.resource_monitors.global_downstream_max_connections',
  {
    readonly '@type': 'type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig';
    readonly max_active_downstream_connections: number;
  }
>;

// --- addresses and data (config.core.v3) ---

export type Address = { readonly socket_address: SocketAddress };

/** A Unix domain socket (an upstream endpoint only: the engine beside Envoy on one host). */
export type PipeAddress = { readonly pipe: { readonly path: string } };

export type SocketAddress = { readonly address: string; readonly port_value: number };

/** A file Envoy reads, or the content itself. */
export type DataSource = OneOf<{ filename: string; inline_string: string }>;

export type HeaderValueOption = {
  readonly header: { readonly key: string; readonly value: string };
  readonly append_action?: 'OVERWRITE_IF_EXISTS_OR_ADD' | 'ADD_IF_ABSENT';
};

export type DnsLookupFamily = 'V4_PREFERRED';

// --- listeners (config.listener.v3) ---

export type Listener = {
  readonly name: string;
  readonly address: Address;
  readonly per_connection_buffer_limit_bytes?: number;
  readonly filter_chains: readonly FilterChain[];
};

export type FilterChain = {
  readonly filters: readonly NetworkFilter[];
  readonly transport_socket?: DownstreamTransportSocket;
};

export type NetworkFilter = HttpConnectionManagerFilter | NetworkRbacFilter | TcpProxyFilter;

export type TcpProxyFilter = TypedExtension<
  'envoy.filters.network.tcp_proxy',
  {
    readonly '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
    readonly stat_prefix: string;
    readonly cluster: string;
  }
>;

// --- HTTP connection manager (extensions.filters.network.http_connection_manager.v3) ---

export type HttpConnectionManagerFilter = TypedExtension<
  'envoy.filters.network.http_connection_manager',
  HttpConnectionManager
>;

export type HttpConnectionManager = {
  readonly '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
  readonly stat_prefix: string;
  readonly codec_type: 'AUTO';
  readonly stream_idle_timeout?: Duration;
  readonly request_timeout?: Duration;
  readonly generate_request_id?: boolean;
  readonly request_id_extension?: {
    readonly typed_config: {
      readonly '@type': 'type.googleapis.com/envoy.extensions.request_id.uuid.v3.UuidRequestIdConfig';
      readonly pack_trace_reason: boolean;
    };
  };
  readonly use_remote_address: boolean;
  readonly normalize_path: boolean;
  readonly merge_slashes: boolean;
  readonly path_with_escaped_slashes_action: 'KEEP_UNCHANGED';
  readonly xff_num_trusted_hops?: number;
  readonly forward_client_cert_details: 'SANITIZE';
  readonly scheme_header_transformation?: { readonly scheme_to_overwrite: 'https' };
  readonly route_config: RouteConfiguration;
  readonly local_reply_config?: LocalReplyConfig;
  readonly http_filters: readonly HttpFilter[];
  readonly tracing?: ConnectionManagerTracing;
};

/** `HttpConnectionManager.Tracing` with the OpenTelemetry provider (config.trace.v3.OpenTelemetryConfig). */
export type ConnectionManagerTracing = {
  readonly random_sampling: { readonly value: number };
  readonly client_sampling: { readonly value: number };
  readonly overall_sampling: { readonly value: number };
  readonly spawn_upstream_span: boolean;
  readonly provider: TypedExtension<
    'envoy.tracers.opentelemetry',
    {
      readonly '@type': 'type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig';
      readonly service_name: string;
      readonly http_service: {
        readonly http_uri: { readonly uri: string; readonly cluster: string; readonly timeout: Duration };
        readonly request_headers_to_add: readonly {
          readonly header: { readonly key: string; readonly value: string };
        }[];
      };
    }
  >;
};

/** Envoy's own replies rewritten: the first mapper whose filter matches a reply changes it. */
export type LocalReplyConfig = {
  readonly mappers: readonly {
    readonly filter: { readonly response_flag_filter: { readonly flags: readonly string[] } };
    readonly status_code?: number;
    readonly body?: DataSource;
    readonly body_format_override?: {
      readonly text_format_source: DataSource;
      readonly content_type?: string;
    };
  }[];
};

// --- routes (config.route.v3) ---

export type RouteConfiguration = { readonly name: string; readonly virtual_hosts: readonly VirtualHost[] };

export type VirtualHost = {
  readonly name: string;
  readonly domains: readonly string[];
  readonly request_body_buffer_limit?: number;
  readonly routes: readonly Route[];
};

export type Route = {
  readonly name: string;
  readonly match: RouteMatch;
  readonly request_headers_to_add?: readonly HeaderValueOption[];
  readonly request_headers_to_remove?: readonly string[];
  readonly response_headers_to_add?: readonly HeaderValueOption[];
  readonly typed_per_filter_config?: PerFilterConfig;
} & OneOf<{ route: RouteAction; direct_response: DirectResponseAction }>;

export type RouteMatch = OneOf<{ prefix: string; path: string; path_separated_prefix: string }> & {
  readonly headers?: readonly HeaderMatcher[];
  readonly query_parameters?: readonly QueryParameterMatcher[];
};

/** `present_match: false` matches when the header is absent. */
export type HeaderMatcher = { readonly name: string } & OneOf<{
  present_match: boolean;
  string_match: StringMatcher;
}>;

/** `present_match: false` matches when the query has no parameter of that name. */
export type QueryParameterMatcher = { readonly name: string; readonly present_match: boolean };

export type RouteAction = OneOf<{ cluster: string; cluster_header: string }> & {
  readonly timeout?: Duration;
  readonly idle_timeout?: Duration;
  readonly auto_host_rewrite?: boolean;
  readonly host_rewrite_literal?: string;
  readonly regex_rewrite?: { readonly pattern: RegexMatcher; readonly substitution: string };
  /** Upgrades this route allows (HTTP/1.1 `Upgrade: websocket`), whatever the connection manager allows. */
  readonly upgrade_configs?: readonly { readonly upgrade_type: string }[];
};

export type DirectResponseAction = { readonly status: number; readonly body?: DataSource };

/** Per-route settings of HTTP filters, by filter name. */
export type PerFilterConfig = {
  readonly 'envoy.filters.http.ext_proc'?: {
    readonly '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute';
    readonly disabled: true;
  };
  readonly 'envoy.filters.http.header_mutation'?: {
    readonly '@type': 'type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutationPerRoute';
    readonly mutations: { readonly request_mutations: readonly HeaderMutation[] };
  };
};

/** One change of config.common.mutation_rules.v3.HeaderMutation: here, removing every header a matcher names. */
export type HeaderMutation = { readonly remove_on_match: { readonly key_matcher: StringMatcher } };

// --- matchers (type.matcher.v3) ---

/** Envoy's `safe_regex` (RE2) must match the whole value. */
export type StringMatcher = OneOf<{ exact: string; prefix: string; safe_regex: RegexMatcher }>;

export type RegexMatcher = { readonly regex: string };

// --- HTTP filters (extensions.filters.http) ---

export type HttpFilter =
  | ExtProcFilter
  | MatchedExtProcFilter
  | HeaderMutationFilter
  | DynamicForwardProxyFilter
  | RouterFilter;

/**
 * ext_proc inside the match delegate (common.matching.v3.ExtensionWithMatcher): skipped from where its matcher
 * says SkipFilter on. Same name as the filter inside, so routes' per-filter configuration still reaches it.
 */
export type MatchedExtProcFilter = TypedExtension<
  'envoy.filters.http.ext_proc',
  {
    readonly '@type': 'type.googleapis.com/envoy.extensions.common.matching.v3.ExtensionWithMatcher';
    readonly extension_config: ExtProcFilter;
    readonly xds_matcher: XdsMatcher;
  }
>;

/** An xds.type.matcher.v3 matcher list: the first field matcher whose predicate holds decides. */
export interface XdsMatcher {
  readonly matcher_list: { readonly matchers: readonly XdsFieldMatcher[] };
}

/** A predicate over one input, and what follows when it holds: an action, or a further matcher. */
export interface XdsFieldMatcher {
  readonly predicate: {
    readonly single_predicate: {
      readonly input: TypedExtension<string, { readonly '@type': string } & Record<string, unknown>>;
    } & (
      | {
          readonly value_match: {
            readonly safe_regex: { readonly regex: string; readonly google_re2: object };
          };
        }
      | {
          readonly custom_match: TypedExtension<
            string,
            { readonly '@type': string } & Record<string, unknown>
          >;
        }
    );
  };
  readonly on_match:
    | { readonly action: TypedExtension<string, { readonly '@type': string }> }
    | { readonly matcher: XdsMatcher };
}

/** Does nothing by itself: routes that skip ext_proc give it their changes (PerFilterConfig). */
export type HeaderMutationFilter = TypedExtension<
  'envoy.filters.http.header_mutation',
  { readonly '@type': 'type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation' }
>;

export type ExtProcFilter = TypedExtension<'envoy.filters.http.ext_proc', ExternalProcessor>;

/** The ext_proc filter's configuration (extensions.filters.http.ext_proc.v3.ExternalProcessor). */
export type ExternalProcessor = {
  readonly '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor';
  readonly grpc_service: { readonly envoy_grpc: { readonly cluster_name: string } };
  readonly failure_mode_allow: boolean;
  readonly message_timeout: Duration;
  readonly max_message_timeout: Duration;
  readonly allow_mode_override: boolean;
  readonly processing_mode: ProcessingMode;
  readonly request_attributes: readonly string[];
  readonly response_attributes: readonly string[];
  /** The dynamic metadata namespaces the engine's answers may set (contract.ts `responsePhaseMetadata`). */
  readonly metadata_options?: { readonly receiving_namespaces: { readonly untyped: readonly string[] } };
  readonly mutation_rules: {
    readonly allow_all_routing: boolean;
    readonly allow_expression: RegexMatcher;
    readonly disallow_is_error: boolean;
  };
};

export type ProcessingMode = {
  readonly request_header_mode: HeaderSendMode;
  readonly response_header_mode: HeaderSendMode;
  readonly request_body_mode: BodySendMode;
  readonly response_body_mode: BodySendMode;
  readonly request_trailer_mode: HeaderSendMode;
  readonly response_trailer_mode: HeaderSendMode;
};

export type HeaderSendMode = 'SEND' | 'SKIP';

export type BodySendMode = 'NONE';

export type DynamicForwardProxyFilter = TypedExtension<
  'envoy.filters.http.dynamic_forward_proxy',
  {
    readonly '@type': 'type.googleapis.com/envoy.extensions.filters.http.dynamic_forward_proxy.v3.FilterConfig';
    readonly dns_cache_config: DnsCacheConfig;
  }
>;

/** Shared by the dynamic forward proxy filter and its clusters: they find each other's cache by name. */
export type DnsCacheConfig = { readonly name: string; readonly dns_lookup_family: DnsLookupFamily };

export type RouterFilter = TypedExtension<
  'envoy.filters.http.router',
  {
    readonly '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
    readonly suppress_envoy_headers: boolean;
  }
>;

// --- RBAC network filter (extensions.filters.network.rbac.v3, matched by xds.type.matcher.v3) ---

export type NetworkRbacFilter = TypedExtension<'envoy.filters.network.rbac', NetworkRbac>;

export type NetworkRbac = {
  readonly '@type': 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC';
  readonly stat_prefix: string;
  readonly matcher: {
    readonly matcher_list: {
      readonly matchers: readonly { readonly predicate: RbacPredicate; readonly on_match: RbacOnMatch }[];
    };
    readonly on_no_match: RbacOnMatch;
  };
};

export type RbacOnMatch = {
  readonly action: TypedExtension<
    string,
    {
      readonly '@type': 'type.googleapis.com/envoy.config.rbac.v3.Action';
      readonly name: string;
      readonly action: 'ALLOW' | 'DENY';
    }
  >;
};

export type RbacPredicate = OneOf<{ single_predicate: SourceIpPredicate; not_matcher: RbacPredicate }>;

/** Whether the connection's source address is in one of the ranges. */
export type SourceIpPredicate = {
  readonly input: TypedExtension<
    'envoy.matching.inputs.source_ip',
    {
      readonly '@type': 'type.googleapis.com/envoy.extensions.matching.common_inputs.network.v3.SourceIPInput';
    }
  >;
  readonly custom_match: TypedExtension<
    'envoy.matching.matchers.ip',
    {
      readonly '@type': 'type.googleapis.com/envoy.extensions.matching.input_matchers.ip.v3.Ip';
      readonly stat_prefix: string;
      readonly cidr_ranges: readonly { readonly address_prefix: string; readonly prefix_len: number }[];
    }
  >;
};

// --- TLS (extensions.transport_sockets.tls.v3) ---

export type DownstreamTransportSocket = TypedExtension<'envoy.transport_sockets.tls', DownstreamTlsContext>;

export type UpstreamTransportSocket = TypedExtension<'envoy.transport_sockets.tls', UpstreamTlsContext>;

export type DownstreamTlsContext = {
  readonly '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
  readonly common_tls_context: CommonTlsContext;
  readonly require_client_certificate?: boolean;
};

export type UpstreamTlsContext = {
  readonly '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';
  readonly sni?: string;
  readonly common_tls_context?: CommonTlsContext;
};

export type CommonTlsContext = {
  readonly tls_certificates?: readonly TlsCertificate[];
  readonly alpn_protocols?: readonly string[];
  readonly validation_context?: CertificateValidationContext;
};

export type TlsCertificate = { readonly certificate_chain: DataSource; readonly private_key: DataSource };

export type CertificateValidationContext = {
  readonly trusted_ca?: DataSource;
  readonly trust_chain_verification?: 'ACCEPT_UNTRUSTED';
  readonly match_typed_subject_alt_names?: readonly {
    readonly san_type: 'DNS' | 'IP_ADDRESS';
    readonly matcher: StringMatcher;
  }[];
};

// --- clusters (config.cluster.v3, config.endpoint.v3) ---

export type Cluster = {
  readonly name: string;
  readonly dns_lookup_family?: DnsLookupFamily;
  readonly connect_timeout: Duration;
  readonly lb_policy?: 'LEAST_REQUEST' | 'CLUSTER_PROVIDED';
  readonly typed_extension_protocol_options?: {
    readonly 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': HttpProtocolOptions;
  };
  readonly circuit_breakers?: {
    readonly thresholds: readonly {
      readonly max_connections: number;
      readonly max_pending_requests: number;
      readonly max_requests: number;
    }[];
  };
  readonly health_checks?: readonly HealthCheck[];
  readonly outlier_detection?: OutlierDetection;
  /** Absent where the cluster type finds the endpoints itself (the dynamic forward proxy). */
  readonly load_assignment?: ClusterLoadAssignment;
  readonly transport_socket?: UpstreamTransportSocket;
} & OneOf<{
  type: 'STATIC' | 'STRICT_DNS';
  cluster_type: TypedExtension<
    'envoy.clusters.dynamic_forward_proxy',
    {
      readonly '@type': 'type.googleapis.com/envoy.extensions.clusters.dynamic_forward_proxy.v3.ClusterConfig';
      readonly dns_cache_config: DnsCacheConfig;
    }
  >;
}>;

/** extensions.upstreams.http.v3.HttpProtocolOptions: which HTTP version a cluster speaks upstream. */
export type HttpProtocolOptions = {
  readonly '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions';
  readonly upstream_http_protocol_options?: {
    readonly auto_sni: boolean;
    readonly auto_san_validation: boolean;
  };
  /**
   * `idle_timeout`: an upstream connection unused this long is closed (Envoy's default: an hour);
   * `max_requests_per_connection`: after this many streams, the next goes on a new connection.
   */
  readonly common_http_protocol_options?: {
    readonly idle_timeout?: Duration;
    readonly max_requests_per_connection?: number;
  };
  readonly explicit_http_config: OneOf<{
    /** HTTP/1.1 with Envoy's defaults. */
    http_protocol_options: Readonly<Record<string, never>>;
    http2_protocol_options: {
      readonly connection_keepalive: { readonly interval: Duration; readonly timeout: Duration };
    };
  }>;
};

export type HealthCheck = {
  readonly timeout: Duration;
  readonly interval: Duration;
  readonly no_traffic_interval: Duration;
  readonly unhealthy_threshold: number;
  readonly healthy_threshold: number;
  readonly grpc_health_check: { readonly service_name: string };
};

export type OutlierDetection = {
  readonly split_external_local_origin_errors: boolean;
  readonly consecutive_local_origin_failure: number;
  readonly interval: Duration;
  readonly base_ejection_time: Duration;
  readonly max_ejection_time: Duration;
  readonly max_ejection_percent: number;
};

export type ClusterLoadAssignment = {
  readonly cluster_name: string;
  readonly endpoints: readonly {
    readonly lb_endpoints: readonly {
      /** `hostname`: the name `auto_host_rewrite` sets as Host. */
      readonly endpoint: { readonly address: Address | PipeAddress; readonly hostname?: string };
    }[];
  }[];
};
