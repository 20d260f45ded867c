import { z } from 'zod';
import { defaultGatewayLimits } from '../envoy/bootstrap/plan.js';
import { identitiesConfigSchema } from '../identity/options.js';
import { stateConfigSchema } from '../state/options.js';
import { backendSchema } from './backend-schema.js';
import { runCrossChecks } from './checks.js';
import { managementConfigSchema } from './management-schema.js';
import { mcpServerSchema } from './mcp-servers.js';
import { networkConfigSchema, tlsConfigSchema } from './network-schema.js';
import { authConfigSchema, mcpConfigSchema } from './service-schema.js';
import { telemetryConfigSchema } from './telemetry-schema.js';

/**
 * The gateway configuration file. Every object is strict: an unknown key is an error naming its path, because a
 * misspelt key silently ignored is a setting the user thinks they have and do not.
 */

const port = z.number().int().min(0).max(65535);

/**
 * `"host:port"` (an IPv6 host in brackets: `"[::]:8080"`) as `{ host, port }`, the form docs/configuration.md writes; any other
 * value is left to the object schema, which says what it wants.
 */
function hostAndPort(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value);
  if (!match) return value;
  return { host: match[1] ?? match[2], port: Number(match[3]) };
}

/**
 * A listener, written `"0.0.0.0:8080"` or `{ host: 0.0.0.0, port: 8080 }`. Port 0 means "any free port", chosen at
 * start; only sensible for the loopback-only parts and in tests.
 */
const listener = (host: string, portNumber: number) =>
  z
    .preprocess(
      hostAndPort,
      z
        .object(
          {
            host: z.string().min(1).default(host),
            port: port.default(portNumber),
          },
          {
            error: (issue) =>
              issue.code === 'invalid_type' ? 'must be "host:port" or { host, port }' : undefined,
          },
        )
        .strict(),
    )
    .default({ host, port: portNumber });

const httpMethod = z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE']);

const backendUrl = z
  .string()
  .url()
  .refine((value) => /^https?:\/\//.test(value), { message: 'must be an http:// or https:// URL' });

const urlSuffix = z.string().regex(/^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/, {
  message: 'must be path segments without leading or trailing "/", e.g. "courses" or "v1/courses"',
});

/**
 * A policy document: a path to an XML file (relative to the configuration file) or the XML itself, inline.
 * Inline XML is recognised by its leading `<`.
 */
const policySource = z.string().min(1);

const jsonSchema = z.record(z.string(), z.unknown());

const parameterSchema = z
  .object({
    name: z.string().min(1),
    description: z.string().optional(),
    required: z.boolean().default(false),
    type: z.enum(['string', 'integer', 'number', 'boolean']).default('string'),
    /** The full JSON Schema when it says more than `type` (enum, format, items…). */
    schema: jsonSchema.optional(),
  })
  .strict();

const responseSchema = z
  .object({
    /** `200`, `4XX` or `default`, as the definition wrote it. */
    status: z.string().min(1),
    description: z.string().optional(),
    /** The response headers it declares: what validate-headers checks. */
    headers: z.array(parameterSchema).optional(),
    contentType: z.string().optional(),
    schema: jsonSchema.optional(),
    /** Every media type of the response with its schema and example: what mock-response answers with. */
    content: z
      .array(
        z
          .object({
            contentType: z.string().min(1),
            schema: jsonSchema.optional(),
            example: z.unknown().optional(),
          })
          .strict(),
      )
      .optional(),
  })
  .strict();

const xmlName = z.object({ namespace: z.string(), localName: z.string().min(1) }).strict();

/** How a SOAP operation is recognised: by its action, then by the first element of the SOAP body. */
const soapMatchSchema = z
  .object({
    version: z.enum(['1.1', '1.2']),
    action: z.string().optional(),
    bodyElement: xmlName.optional(),
    responseElement: xmlName.optional(),
  })
  .strict();

export const operationSchema = z
  .object({
    id: z.string().min(1).optional(),
    method: httpMethod,
    urlTemplate: z.string().startsWith('/', { message: 'must start with "/"' }),
    displayName: z.string().optional(),
    description: z.string().optional(),
    templateParameters: z.array(parameterSchema).default([]),
    queryParameters: z.array(parameterSchema).default([]),
    headerParameters: z.array(parameterSchema).default([]),
    /** JSON Schema of the request body, when the operation takes one. */
    requestBody: jsonSchema.optional(),
    requestBodyRequired: z.boolean().optional(),
    requestContentType: z.string().optional(),
    /** Every media type of the request body with its schema: what validate-content checks against. */
    requestContent: z
      .array(z.object({ contentType: z.string().min(1), schema: jsonSchema.optional() }).strict())
      .optional(),
    responses: z.array(responseSchema).default([]),
    /** For the operations of a SOAP pass-through API. */
    soap: soapMatchSchema.optional(),
    policy: policySource.optional(),
  })
  .strict();

export const apiSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9_-]+$/, { message: 'must be letters, digits, "-" or "_"' }),
    name: z.string().min(1).optional(),
    description: z.string().optional(),
    /**
     * `soap` for a WSDL pass-through API, whose operations are told apart by SOAP action or body element; `mcp` for a
     * remote MCP server (Streamable HTTP) at `serviceUrl`, published at `/<urlSuffix>/mcp` (config/mcp-servers.ts);
     * `websocket` for a WebSocket pass-through API, whose one operation, onHandshake, runs on the opening handshake.
     */
    type: z.enum(['http', 'soap', 'mcp', 'websocket']).default('http'),
    /** For an API of type `mcp`: which of the server's tools are shown and which need write scope. */
    mcp: mcpServerSchema.optional(),
    /**
     * A definition file (relative to the configuration) whose operations are published too; operations listed
     * here with the same id win (to attach a policy, say).
     */
    definition: z
      .object({ format: z.enum(['openapi', 'wadl', 'wsdl']), file: z.string().min(1) })
      .strict()
      .optional(),
    /**
     * Whether a call needs a subscription key when no open product contains the API. API Management defaults to
     * true; here it defaults to false so an API works before any subscription is configured.
     */
    subscriptionRequired: z.boolean().default(false),
    /** Where the subscription key travels; the header wins when both are present. */
    subscriptionKeyNames: z
      .object({
        header: z.string().min(1).default('Ocp-Apim-Subscription-Key'),
        query: z.string().min(1).default('subscription-key'),
      })
      .strict()
      .prefault({}),
    urlSuffix,
    serviceUrl: backendUrl,
    /**
     * The version this API is of a version set (`versionSets`): with path versioning its URL suffix ends with
     * `/<name>` (an empty name is the original version, served at the set's own path).
     */
    version: z
      .object({ set: z.string().min(1), name: z.string() })
      .strict()
      .optional(),
    /** Host names the API answers on; every host when absent. */
    hostnames: z.array(z.string().min(1)).min(1).optional(),
    operations: z.array(operationSchema).default([]),
    policy: policySource.optional(),
  })
  .strict();

export const productSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9_-]+$/, { message: 'must be letters, digits, "-" or "_"' }),
    name: z.string().min(1).optional(),
    /** Ids of the APIs in this product. */
    apis: z.array(z.string().min(1)).default([]),
    /** An open product (false) admits calls without a key; at most one open product may contain an API. */
    subscriptionRequired: z.boolean().default(true),
    policy: policySource.optional(),
  })
  .strict();

const entityId = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+$/, { message: 'must be letters, digits, ".", "-" or "_"' });

/** A developer account; subscriptions belong to users, `vary-by-developer` keys on them. */
export const userSchema = z
  .object({
    id: entityId,
    email: z.string().optional(),
    firstName: z.string().optional(),
    lastName: z.string().optional(),
    /** Ids of `groups` the user belongs to. */
    groups: z.array(z.string()).default([]),
  })
  .strict();

export const groupSchema = z.object({ id: entityId, name: z.string().optional() }).strict();

const subscriptionKey = z
  .string()
  .min(16, { message: 'must be at least 16 characters (it is a credential)' });

/** A subscription: a key pair scoped to one product, one API, or all APIs. */
export const subscriptionSchema = z
  .object({
    id: entityId,
    name: z.string().optional(),
    scope: z.union([
      z.literal('all'),
      z.object({ product: z.string().min(1) }).strict(),
      z.object({ api: z.string().min(1) }).strict(),
    ]),
    primaryKey: subscriptionKey,
    secondaryKey: subscriptionKey.optional(),
    /** The owning user; none for a standalone subscription. */
    user: z.string().optional(),
    state: z.enum(['active', 'suspended', 'cancelled', 'expired']).default('active'),
  })
  .strict();

/** An environment variable name, as POSIX shells allow. */
const environmentVariable = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  message: 'must be an environment variable name (letters, digits, "_")',
});

const namedValueSchema = z.union([
  z.string(),
  z
    .object({
      value: z.string(),
      /** A secret value is never logged nor shown in an error. */
      secret: z.boolean().default(false),
    })
    .strict(),
  /**
   * A value the operator provides in an environment variable, read when the configuration is compiled: what API
   * Management kept in Key Vault, or a secret its extract does not carry. An unset variable is a load error.
   */
  z
    .object({
      env: environmentVariable,
      secret: z.boolean().default(true),
      /** Where API Management read it (`portcullis export apiops` writes it back); Portcullis does not fetch it. */
      keyVault: z
        .object({ secretIdentifier: z.string().min(1), identityClientId: z.string().min(1).optional() })
        .strict()
        .optional(),
    })
    .strict(),
]);

/** An HTTP header name (RFC 9110 token). */
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, {
  message: "must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)",
});

/**
 * An API Management version set: the APIs that are versions of one API. `path` (API Management's `Segment`): each
 * version is its own API whose URL suffix ends with the version (`/orders/v2/…`). `header` and `query`: the versions
 * share one URL suffix and the request names its version in the `header` or the `query` parameter; a request that
 * names none goes to the version named "" (API Management's Original version), and one that names a version the set
 * does not have is 404, as for a URL of no API.
 */
export const versionSetSchema = z
  .object({
    id: entityId,
    name: z.string().optional(),
    description: z.string().optional(),
    scheme: z.enum(['path', 'header', 'query']).default('path'),
    /** Header versioning: the request header that names the version (API Management's `versionHeaderName`). */
    header: headerName.optional(),
    /** Query versioning: the query parameter that names the version (API Management's `versionQueryName`). */
    query: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((set, ctx) => {
    for (const key of ['header', 'query'] as const) {
      if (set.scheme === key && set[key] === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['scheme'],
          message: `${key} versioning needs the ${key === 'header' ? 'header' : 'query parameter'} that names the version: set "${key}"`,
        });
      if (set.scheme !== key && set[key] !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `"${key}" names the version only with scheme ${key}, got scheme ${set.scheme}`,
        });
    }
  });

/** A process `up` starts and stops with the gateway, such as the example's sample backend. */
export const companionProcessSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9-]+$/, { message: 'must be lower-case letters, digits and "-"' }),
    command: z.array(z.string().min(1)).min(1),
    cwd: z.string().optional(),
    env: z.record(z.string(), z.string()).default({}),
    /** `up` waits until this URL answers 2xx before it reports the gateway ready. */
    readyUrl: z.string().url().optional(),
  })
  .strict();

const mebibyte = 1024 * 1024;

/**
 * What Envoy holds per client and how long it waits (defaults and reasons: `defaultGatewayLimits`). The upper bounds
 * keep a buffered body, which crosses to the engine as one gRPC message, under that message's 16 MiB limit.
 */
const gatewayLimitsSchema = z
  .object({
    /** The largest request body a policy that reads the body gets; a larger one is refused with 413. */
    maxRequestBodyBytes: z
      .number()
      .int()
      .min(1024)
      .max(8 * mebibyte)
      .default(defaultGatewayLimits.maxRequestBodyBytes),
    /** What Envoy reads and buffers per client connection. */
    connectionBufferBytes: z
      .number()
      .int()
      .min(32 * 1024)
      .max(4 * mebibyte)
      .default(defaultGatewayLimits.connectionBufferBytes),
    /** A request on which nothing moved for this long is ended. */
    streamIdleTimeoutMs: z
      .number()
      .int()
      .min(1000)
      .max(3_600_000)
      .default(defaultGatewayLimits.streamIdleTimeoutMs),
    /** The whole request must have arrived (or its response begun) within this; 0: no deadline. */
    requestTimeoutMs: z
      .number()
      .int()
      .min(0)
      .max(3_600_000)
      .refine((ms) => ms === 0 || ms >= 1000, 'must be 0 (no deadline) or at least 1000')
      .default(defaultGatewayLimits.requestTimeoutMs),
    /** The most WebSocket connections one WebSocket API has open at once through one Envoy; 503 beyond. */
    webSocketConnections: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(defaultGatewayLimits.webSocketConnections),
  })
  .strict()
  .prefault({});

const gatewayConfigObject = z
  .object({
    gateway: z
      .object({
        http: listener('0.0.0.0', 8080),
        /**
         * How many proxies in front of the gateway (a load balancer, a CDN) are trusted to append the client's
         * address to X-Forwarded-For. 0: the client is the TCP peer and X-Forwarded-For is only passed on. With N,
         * the client is the N-th entry from the end as it arrives; set it only when every path to the listeners
         * goes through those proxies, or a client can choose its own address (the key of the service's abuse
         * limits, the engine's `ip-filter` and `context.Request.IpAddress`).
         */
        trustedProxyHops: z.number().int().min(0).max(10).default(0),
        limits: gatewayLimitsSchema,
      })
      .strict()
      .prefault({}),
    admin: listener('127.0.0.1', 9901),
    engine: z
      .object({
        host: z.string().default('127.0.0.1'),
        /** Ports of the engine processes; 0 picks a free one. One entry per process, Envoy balances across them. */
        ports: z.array(port).min(1).default([0]),
        /** Envoy's per-message deadline for an engine answer. */
        messageTimeoutMs: z.number().int().min(1).max(60_000).default(500),
        metricsPort: port.optional(),
        /**
         * Under `up`: one more engine process, loaded and built but not listening, that takes a dead engine's port at
         * once (cli/warm-spare.ts). Unset: on with one engine (nothing else serves the APIs while it restarts), off
         * with several (the others take a dead one's share). It costs one more Node process (~80–100 MB).
         */
        warmSpare: z.boolean().optional(),
        /**
         * A secret that switches on a debug trace for one request (header `x-portcullis-trace`); without it no
         * request can be traced.
         */
        traceKey: z
          .string()
          .min(16, { message: 'must be at least 16 characters (it is a credential)' })
          .optional(),
      })
      .strict()
      .default({ host: '127.0.0.1', ports: [0], messageTimeoutMs: 500 }),
    service: z
      .preprocess(
        hostAndPort,
        z
          .object(
            {
              host: z.string().min(1).default('127.0.0.1'),
              port: port.default(0),
              /** The service's Prometheus /metrics, on the service's host, apart from the listener Envoy forwards to. */
              metricsPort: port.optional(),
            },
            {
              error: (issue) =>
                issue.code === 'invalid_type'
                  ? 'must be "host:port" or { host, port, metricsPort }'
                  : undefined,
            },
          )
          .strict(),
      )
      .default({ host: '127.0.0.1', port: 0 }),
    envoy: z
      .object({
        logLevel: z
          .enum(['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off'])
          .default('warning'),
        concurrency: z.number().int().min(1).max(64).default(2),
        /**
         * After a hot restart (a reload that changes routes, clusters or listeners), how long the previous Envoy asks
         * its clients to move to the new one, and when it exits whatever still runs on it. Long requests (event
         * streams, large uploads) want more; the tests want less.
         */
        drainSeconds: z.number().int().min(0).max(3600).default(2),
        parentShutdownSeconds: z.number().int().min(1).max(3600).default(5),
      })
      .strict()
      .refine((envoy) => envoy.parentShutdownSeconds > envoy.drainSeconds, {
        message:
          'parentShutdownSeconds must be greater than drainSeconds (Envoy exits the previous epoch after both)',
        path: ['parentShutdownSeconds'],
      })
      .default({ logLevel: 'warning', concurrency: 2, drainSeconds: 2, parentShutdownSeconds: 5 }),
    apis: z.array(apiSchema).default([]),
    products: z.array(productSchema).default([]),
    backends: z.array(backendSchema).default([]),
    users: z.array(userSchema).default([]),
    groups: z.array(groupSchema).default([]),
    subscriptions: z.array(subscriptionSchema).default([]),
    versionSets: z.array(versionSetSchema).default([]),
    namedValues: z.record(z.string().regex(/^[A-Za-z0-9._-]+$/), namedValueSchema).default({}),
    /** The global-scope policy (API Management's "All APIs"). */
    policy: policySource.optional(),
    /** Policy fragments by id, for `<include-fragment fragment-id="…"/>`. */
    fragments: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), policySource).default({}),
    /**
     * The schema registry (API Management's Schemas): JSON Schemas by id, for validate-content's `schema-id`; each a
     * JSON file beside the configuration, or the schema written in place.
     */
    schemas: z
      .record(z.string().regex(/^[A-Za-z0-9_.-]+$/), z.union([z.string().min(1), jsonSchema]))
      .default({}),
    state: stateConfigSchema.prefault({}),
    network: networkConfigSchema.prefault({}),
    tls: tlsConfigSchema.optional(),
    auth: authConfigSchema.optional(),
    mcp: mcpConfigSchema.optional(),
    /** Where the gateway's own tokens come from (authentication-managed-identity, get-authorization-context). */
    identities: identitiesConfigSchema.optional(),
    management: managementConfigSchema.optional(),
    processes: z.array(companionProcessSchema).default([]),
    /** Where traces go (OpenTelemetry); absent: none are recorded. */
    telemetry: telemetryConfigSchema.optional(),
  })
  .strict();

/** The configuration as the sections' schemas give it, before the checks that span sections. */
export type GatewayConfig = z.infer<typeof gatewayConfigObject>;

/** The whole file: the sections, then every named cross-field check of `checks.ts`. */
export const gatewayConfigSchema = gatewayConfigObject.superRefine(runCrossChecks);

export type ApiConfig = z.infer<typeof apiSchema>;
export type OperationConfig = z.infer<typeof operationSchema>;
export type CompanionProcessConfig = z.infer<typeof companionProcessSchema>;
export type ProductConfig = z.infer<typeof productSchema>;
export type { BackendConfig } from './backend-schema.js';
export { backendSchema };
export type SubscriptionConfig = z.infer<typeof subscriptionSchema>;
export type UserConfig = z.infer<typeof userSchema>;
export type VersionSetConfig = z.infer<typeof versionSetSchema>;
export type NamedValueConfig = z.infer<typeof namedValueSchema>;
