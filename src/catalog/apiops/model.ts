/**
 * APIOps artifacts (the folder API Management's extractor writes and its publisher reads) ⇄ the gateway
 * configuration. The catalog does not know the configuration's schema module, so the configuration appears here as
 * the plain data it is in the file: the importer builds it (the CLI validates it with the schema), the exporter reads
 * the parsed file, whose shape is a superset of these types.
 */

export type PolicySource = string;

export interface OperationEntry {
  id?: string;
  method: string;
  urlTemplate: string;
  displayName?: string;
  description?: string;
  templateParameters?: ParameterEntry[];
  queryParameters?: ParameterEntry[];
  headerParameters?: ParameterEntry[];
  requestBody?: Record<string, unknown>;
  requestContentType?: string;
  responses?: {
    status: string;
    description?: string;
    contentType?: string;
    schema?: Record<string, unknown>;
    content?: { contentType: string; schema?: Record<string, unknown>; example?: unknown }[];
  }[];
  policy?: PolicySource;
  [more: string]: unknown;
}

export interface ParameterEntry {
  name: string;
  description?: string;
  required?: boolean;
  type?: string;
  schema?: Record<string, unknown>;
}

export interface ApiEntry {
  id: string;
  name?: string;
  description?: string;
  type?: 'http' | 'soap' | 'websocket' | 'mcp' | 'graphql';
  /** An MCP server API's tool rules (config/mcp-servers.ts): Portcullis's own, no API Management property. */
  mcp?: Record<string, unknown>;
  /** A GraphQL API's schema: an SDL file beside the configuration. */
  graphql?: { schema: string };
  definition?: { format: 'openapi' | 'wadl' | 'wsdl'; file: string };
  subscriptionRequired?: boolean;
  subscriptionKeyNames?: { header?: string; query?: string };
  urlSuffix: string;
  serviceUrl: string;
  version?: { set: string; name: string };
  hostnames?: string[];
  operations?: OperationEntry[];
  policy?: PolicySource;
}

export interface ProductEntry {
  id: string;
  name?: string;
  apis?: string[];
  subscriptionRequired?: boolean;
  policy?: PolicySource;
}

/**
 * A backend as the configuration's `backends` section holds it (config/backend-schema.ts): a single backend's URL,
 * credentials, TLS checks and circuit breaker, or a pool's services. The nested parts pass through as written.
 */
export interface BackendEntry {
  id: string;
  type?: 'single' | 'pool';
  description?: string;
  url?: string;
  protocol?: 'http';
  credentials?: Record<string, unknown>;
  tls?: Record<string, unknown>;
  circuitBreaker?: { rules: Record<string, unknown>[] };
  pool?: {
    services: { id: string; priority?: number; weight?: number }[];
    sessionAffinity?: { sessionId: { source: string; name: string } };
  };
}

export interface UserEntry {
  id: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  groups?: string[];
}

export interface GroupEntry {
  id: string;
  name?: string;
}

export interface SubscriptionEntry {
  id: string;
  name?: string;
  scope: 'all' | { product: string } | { api: string };
  primaryKey: string;
  secondaryKey?: string;
  user?: string;
  state?: 'active' | 'suspended' | 'cancelled' | 'expired';
}

export interface VersionSetEntry {
  id: string;
  name?: string;
  description?: string;
  scheme?: 'path' | 'header' | 'query';
  header?: string;
  query?: string;
}

export type NamedValueEntry =
  | string
  | { value: string; secret?: boolean }
  | { env: string; secret?: boolean; keyVault?: { secretIdentifier: string; identityClientId?: string } };

/** The sections of a gateway configuration that an APIOps folder describes. */
export interface GatewayDocument {
  apis: ApiEntry[];
  products: ProductEntry[];
  backends: BackendEntry[];
  users: UserEntry[];
  groups: GroupEntry[];
  subscriptions: SubscriptionEntry[];
  versionSets: VersionSetEntry[];
  namedValues: Record<string, NamedValueEntry>;
  policy?: PolicySource;
  fragments: Record<string, PolicySource>;
}

/** The sections `import apiops` writes (replacing them in an existing file) and `export apiops` reads. */
export const gatewaySections = [
  'apis',
  'products',
  'backends',
  'users',
  'groups',
  'subscriptions',
  'versionSets',
  'namedValues',
  'policy',
  'fragments',
] as const satisfies readonly (keyof GatewayDocument)[];

/**
 * Something of the artifacts that was not carried over, or a value the operator must provide: the file it came
 * from (relative to the artifact folder or the configuration) and why. Nothing is left out without one.
 */
export interface Finding {
  readonly file: string;
  readonly message: string;
  /**
   * `skipped`: not carried over; `changed`: carried over in another form (a name Portcullis ids do not allow);
   * `todo`: works once the operator acts (sets an environment variable).
   */
  readonly kind: 'skipped' | 'changed' | 'todo';
}

export function emptyDocument(): GatewayDocument {
  return {
    apis: [],
    products: [],
    backends: [],
    users: [],
    groups: [],
    subscriptions: [],
    versionSets: [],
    namedValues: {},
    fragments: {},
  };
}
