import { z } from 'zod';

/**
 * The `backends` section: API Management's backend entity, what `set-backend-service backend-id="…"` names.
 * Its fields are the entity's (https://learn.microsoft.com/azure/api-management/backends, and the REST API's
 * `BackendContract`): a `single` backend is a URL with its credentials, TLS checks and circuit breaker; a `pool`
 * spreads requests over single backends by priority group and weight.
 *
 * ```yaml
 * backends:
 *   - id: openai-east
 *     url: https://east.example.com/openai
 *     credentials:
 *       header: { api-key: ["{{east-key}}"] }
 *     circuitBreaker:
 *       rules:
 *         - name: throttled
 *           failureCondition: { count: 1, interval: PT1M, statusCodeRanges: [{ min: 429, max: 429 }] }
 *           tripDuration: PT1M
 *           acceptRetryAfter: true
 *   - id: openai-pool
 *     type: pool
 *     pool:
 *       services: [{ id: openai-east, priority: 1 }, { id: openai-west, priority: 2, weight: 3 }]
 * ```
 *
 * The checks that span entries (a pool naming a backend that is not a single one, a single backend without a URL)
 * are `backendIssues`, one of checks.ts's cross-field rules.
 */

const backendId = z.string().regex(/^[A-Za-z0-9_-]+$/, { message: 'must be letters, digits, "-" or "_"' });

const backendUrl = z
  .string()
  .url()
  .refine((value) => /^https?:\/\//.test(value), { message: 'must be an http:// or https:// URL' });

/** ISO 8601 durations as API Management writes them (`PT1M`, `PT30S`, `P1D`), read to whole seconds. */
const isoDurationPattern = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

export function durationSeconds(text: string): number | undefined {
  const match = isoDurationPattern.exec(text);
  if (!match || text === 'P' || text.endsWith('T')) return undefined;
  const [, days, hours, minutes, seconds] = match;
  return (
    Number(days ?? 0) * 86_400 + Number(hours ?? 0) * 3600 + Number(minutes ?? 0) * 60 + Number(seconds ?? 0)
  );
}

const isoDuration = z.string().refine((text) => (durationSeconds(text) ?? 0) > 0, {
  message: 'must be a positive ISO 8601 duration, e.g. "PT1M" or "PT30S"',
});

const statusCodeRange = z
  .object({ min: z.number().int().min(100).max(599), max: z.number().int().min(100).max(599) })
  .strict()
  .refine((range) => range.min <= range.max, { message: 'min must not be greater than max', path: ['max'] });

/**
 * When a rule counts a failure and how many trip it: `count` failures (or `percentage` of the calls) within
 * `interval`, a failure being an answer whose status is in one of `statusCodeRanges`.
 */
const failureConditionSchema = z
  .object({
    count: z.number().int().min(1).max(10_000).optional(),
    percentage: z.number().int().min(1).max(100).optional(),
    interval: isoDuration,
    statusCodeRanges: z.array(statusCodeRange).min(1).max(10).optional(),
    /** API Management's free-text labels of the failures (e.g. "Server errors"); kept, not interpreted. */
    errorReasons: z.array(z.string().max(200)).max(10).optional(),
  })
  .strict();

const circuitBreakerRuleSchema = z
  .object({
    name: z.string().min(1).max(80).optional(),
    failureCondition: failureConditionSchema.optional(),
    tripDuration: isoDuration,
    /** The backend's `Retry-After`, when it sends one, is the trip duration instead. */
    acceptRetryAfter: z.boolean().default(false),
  })
  .strict()
  .superRefine((rule, ctx) => {
    const condition = rule.failureCondition;
    // A rule that names no failure would never trip, or trip on everything: both are mistakes.
    if (
      condition === undefined ||
      (condition.count === undefined && condition.percentage === undefined) ||
      condition.statusCodeRanges === undefined
    )
      ctx.addIssue({
        code: 'custom',
        path: condition === undefined ? [] : ['failureCondition'],
        message:
          'a circuit breaker rule needs a failureCondition with statusCodeRanges and count or percentage (which answers are failures, and how many trip it)',
      });
  });

/** A header's or query parameter's values, each a literal or `{{named-value}}` (resolved at load, kept secret). */
const credentialValues = z.record(z.string().min(1), z.array(z.string()).min(1).max(10));

const credentialsSchema = z
  .object({
    header: credentialValues.optional(),
    query: credentialValues.optional(),
    /** The `Authorization` header: `scheme parameter`. */
    authorization: z
      .object({ scheme: z.string().min(1), parameter: z.string().min(1) })
      .strict()
      .optional(),
    /** Client certificates by id in `tls.certificates` (API Management's `certificateIds`); the first is presented. */
    certificateIds: z.array(z.string().min(1)).max(1).optional(),
    /**
     * A token from the gateway's `identities` for `resource`, sent as `Authorization: Bearer …` (API Management's
     * managed identity credential; `clientId` picks a source as authentication-managed-identity's client-id does).
     */
    managedIdentity: z
      .object({ resource: z.string().min(1), clientId: z.string().min(1).optional() })
      .strict()
      .optional(),
  })
  .strict();

const tlsSchema = z
  .object({
    /** Check the backend's certificate chain up to a trusted CA (default true, as in API Management). */
    validateCertificateChain: z.boolean().default(true),
    /** Check that the certificate names the backend's host (default true, as in API Management). */
    validateCertificateName: z.boolean().default(true),
    /** Portcullis: a PEM file of the CA that signs the backend's certificate; the system store when absent. */
    trustedCa: z.string().min(1).optional(),
  })
  .strict();

const poolServiceSchema = z
  .object({
    /** A single backend's id (API Management writes `/backends/<id>` or a full resource id: the last segment). */
    id: z.string().min(1),
    /** Lower numbers first: a lower group gets requests only while every backend of the higher ones is tripped. */
    priority: z.number().int().min(0).max(100).default(1),
    /** Share of requests within the priority group. */
    weight: z.number().int().min(0).max(100).default(1),
  })
  .strict();

/** A cookie name as RFC 6265 allows one (an HTTP token). */
const cookieName = z.string().regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}$/, {
  message: 'must be a cookie name (letters, digits, "-", "_", …)',
});

/**
 * API Management's session awareness of a pool (`pool.sessionAffinity`): the gateway keeps each client session on one
 * backend with a session cookie it sets. The entity's shape is `sessionId: { source: Cookie, name }`.
 */
const sessionAffinitySchema = z
  .object({
    sessionId: z
      .object({
        /** Where the session id is read: a cookie (the only source API Management documents). */
        source: z.enum(['Cookie', 'cookie']),
        /** The cookie's name. */
        name: cookieName,
      })
      .strict(),
  })
  .strict();

/** A backend that `set-backend-service backend-id="…"` can name. */
export const backendSchema = z
  .object({
    id: backendId,
    /** Absent: single. */
    type: z.enum(['single', 'pool']).optional(),
    description: z.string().max(2000).optional(),
    /** A single backend's base URL (a pool has none). */
    url: backendUrl.optional(),
    /** Absent: http (the only protocol of a URL backend). */
    protocol: z.enum(['http']).optional(),
    credentials: credentialsSchema.optional(),
    tls: tlsSchema.optional(),
    circuitBreaker: z
      .object({ rules: z.array(circuitBreakerRuleSchema).min(1).max(1, 'API Management allows one rule') })
      .strict()
      .optional(),
    pool: z
      .object({
        services: z.array(poolServiceSchema).min(1).max(30, 'a pool holds at most 30 backends'),
        sessionAffinity: sessionAffinitySchema.optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type BackendConfig = z.infer<typeof backendSchema>;
export type CircuitBreakerRuleConfig = z.infer<typeof circuitBreakerRuleSchema>;
export type BackendCredentialsConfig = z.infer<typeof credentialsSchema>;
export type SessionAffinityConfig = z.infer<typeof sessionAffinitySchema>;

/** The backend id a pool service names: the last segment of `/backends/<id>` or of a full resource id. */
export function poolMemberId(reference: string): string {
  return reference.slice(reference.lastIndexOf('/') + 1);
}

interface Issue {
  readonly path: (string | number)[];
  readonly message: string;
}

/**
 * The rules across entries: unique ids; a single backend has a URL and no pool; a pool has services, each a single
 * backend of this file, and no URL, credentials or circuit breaker of its own (its members have theirs).
 */
export function* backendIssues(
  backends: readonly BackendConfig[],
  certificateIds: readonly string[],
): Iterable<Issue> {
  const byId = new Map(backends.map((backend) => [backend.id, backend]));
  const seen = new Map<string, number>();
  for (const [index, backend] of backends.entries()) {
    const at = (...keys: (string | number)[]) => ['backends', index, ...keys];
    const previous = seen.get(backend.id);
    if (previous !== undefined)
      yield { path: at('id'), message: `duplicate backend id "${backend.id}" (also backends[${previous}])` };
    seen.set(backend.id, index);
    if (backend.type !== 'pool') {
      if (backend.url === undefined) yield { path: at('url'), message: 'a single backend needs a url' };
      if (backend.pool !== undefined)
        yield { path: at('pool'), message: 'only a backend of type "pool" has pool services' };
    } else {
      if (backend.pool === undefined)
        yield { path: at(), message: 'a backend of type "pool" needs pool.services' };
      for (const key of ['url', 'credentials', 'circuitBreaker', 'tls'] as const)
        if (backend[key] !== undefined)
          yield { path: at(key), message: `a pool has no ${key} of its own: set it on its member backends` };
    }
    for (const [position, service] of (backend.pool?.services ?? []).entries()) {
      const member = byId.get(poolMemberId(service.id));
      const known = backends
        .filter((candidate) => candidate.type !== 'pool')
        .map((candidate) => candidate.id);
      if (member === undefined)
        yield {
          path: at('pool', 'services', position, 'id'),
          message: `no backend "${poolMemberId(service.id)}" (single backends: ${known.join(', ') || 'none'})`,
        };
      else if (member.type === 'pool')
        yield {
          path: at('pool', 'services', position, 'id'),
          message: `"${member.id}" is a pool: a pool holds single backends only`,
        };
    }
    for (const [position, id] of (backend.credentials?.certificateIds ?? []).entries())
      if (!certificateIds.includes(id))
        yield {
          path: at('credentials', 'certificateIds', position),
          message: `no certificate "${id}" in tls.certificates (known: ${certificateIds.join(', ') || 'none'})`,
        };
  }
}
