import type { Catalog } from '../../catalog/catalog.js';
import type { SubscriptionDirectory } from '../../catalog/subscriptions.js';
import type { ResolvedBackend } from '../../config/backend-credentials.js';
import type { Pipeline, PolicyServices } from '../../policy/index.js';
import type { BackendBreakers } from '../backend-breakers.js';
import type { BackendRoutes } from '../backend-routes.js';
import type { BackendRouting } from '../backend-routing.js';
import type { TrustStore } from '../client-certificate.js';
import type { McpAccess } from '../mcp-access.js';
import type { McpToolFilter } from '../mcp-tools.js';
import type { SummaryTargets } from './summary.js';

/** What the exchanges of one configuration share: its catalog and routes, the policy services, its limits. */
export interface PolicyEngine extends SummaryTargets {
  readonly catalog: Catalog<Pipeline>;
  readonly routes: BackendRoutes;
  /** Whether Envoy follows the engine's backend choice (see backend-routing.ts); default `engine`. */
  readonly backendRouting?: BackendRouting;
  readonly services: PolicyServices;
  /** The backend entities' circuit breakers and credentials; absent: none (offline policy tests). */
  readonly backendEntities?: {
    /** Whether answers from named backends are looked at: a circuit breaker to tell, a session cookie to set. */
    readonly watching: boolean;
    readonly breakers: BackendBreakers;
    readonly byId: ReadonlyMap<string, ResolvedBackend>;
  };
  /**
   * The largest request body a pipeline that reads the body is given (the gateway's `limits.maxRequestBodyBytes`,
   * which Envoy buffers against too); a larger one is refused with 413. Absent: no check beyond Envoy's.
   */
  readonly maxRequestBodyBytes?: number;
  /**
   * The longest Envoy waits for one answer when the engine asks (its `max_message_timeout`, contract.ts
   * `maxMessageTimeoutMs`); absent: slow policy work asks for what it needs, uncapped.
   */
  readonly maxMessageTimeoutMs?: number;
  /** Subscriptions and their keys; without it every API is open. */
  readonly subscriptions?: SubscriptionDirectory;
  /** The authorities client certificates are checked against (`tls.clientCertificates.trustedCa`). */
  readonly trust?: TrustStore;
  /** The authorization server's check in front of the MCP server APIs' own URLs (mcp-access.ts). */
  readonly mcpAccess?: McpAccess;
  /** The MCP server APIs' tool filters at their own URLs, by API id (mcp-tools.ts). */
  readonly mcpTools?: ReadonlyMap<string, McpToolFilter>;
}
