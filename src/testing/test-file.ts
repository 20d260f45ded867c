/**
 * The policy test file (`*.policy-test.yaml`): cases that each send one request through a configuration's compiled
 * pipeline with stubbed backends and state, and say what must come out. Parsed and checked once, every problem
 * located as a configuration's are (`file:line:col: key.path: message`).
 */
import path from 'node:path';
import { z } from 'zod';
import { parseYamlWith, readYamlFile } from '../config/load.js';

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const stringMap = z.record(z.string(), scalar.transform(String));

/** A body to send or answer with: text as written, anything else as JSON. */
const body = z.unknown();

/** A response a stub answers with; `fail` instead makes the call fail as an unreachable or slow backend does. */
export const responseStubSchema = z.strictObject({
  status: z.number().int().min(100).max(599).default(200),
  reason: z.string().optional(),
  headers: stringMap.default({}),
  body: body.optional(),
  fail: z.enum(['connection', 'timeout']).optional(),
});

/** An HTTP call a policy or the forwarded request makes, matched by URL (a trailing `*`: a prefix) and method. */
const routedResponseSchema = responseStubSchema.extend({
  url: z.string().min(1),
  method: z.string().min(1).optional(),
});

/** What a token source hands out for one resource: the token, or `{ fail }` with the source's error message. */
const tokenStubSchema = z.union([z.string().min(1), z.strictObject({ fail: z.string().min(1) })]);
export type TokenStub = z.output<typeof tokenStubSchema>;

/**
 * What a credential manager connection gives get-authorization-context: its access token (the claims are a JWT's
 * own unless given), or `{ fail }` with why it is not available.
 */
const authorizationStubSchema = z.union([
  z.string().min(1),
  z.strictObject({
    accessToken: z.string().min(1),
    claims: z.record(z.string(), z.unknown()).optional(),
  }),
  z.strictObject({ fail: z.string().min(1) }),
]);
export type AuthorizationStub = z.output<typeof authorizationStubSchema>;

/** Stubs by a name, then by a second name (`*`: any), e.g. identity → resource → token. */
const byTwoNames = <T extends z.ZodType>(stub: T) =>
  z.record(z.string().min(1), z.record(z.string().min(1), stub)).default({});

export const stubsSchema = z.strictObject({
  /** The backend's answer to the forwarded request: one for any URL, or one per URL. */
  backend: z.union([responseStubSchema, z.array(routedResponseSchema)]).optional(),
  /** Answers to the calls policies make (send-request, send-one-way-request, openid-config, JWKS). */
  http: z.array(routedResponseSchema).default([]),
  /** cache-lookup-value sees these values (cache-store-value's keys). */
  cache: z.record(z.string(), z.unknown()).default({}),
  /** Counts already made, by the key the counter is kept under (e.g. `rate-limit-by-key:<counter-key>`). */
  counters: z.record(z.string(), z.number().int().min(0)).default({}),
  /** The time the request is made at (ISO 8601); retries' waits move it on instead of sleeping. */
  time: z.iso.datetime({ offset: true }).optional(),
  /**
   * The gateway's own tokens (authentication-managed-identity, send-request's child of that name), instead of the
   * identities' token sources: by identity — the policy's client-id, the source it selects (identities.sources),
   * or `default` — then by resource (`*`: any).
   */
  tokens: byTwoNames(tokenStubSchema),
  /** get-authorization-context's connections, instead of the credential manager: by provider-id, then authorization-id. */
  authorizations: byTwoNames(authorizationStubSchema),
});

const jwtSchema = z.strictObject({
  /** One of the file's `keys`. */
  key: z.string().min(1),
  claims: z.record(z.string(), z.unknown()).default({}),
  /** Seconds from the request's time; default one hour. */
  expiresIn: z.number().int().optional(),
  header: z.string().default('Authorization'),
  scheme: z.string().default('Bearer'),
});

const requestSchema = z.strictObject({
  method: z.string().min(1).optional(),
  /** The path as the client sends it, the API's URL suffix included; default: the operation's template, filled. */
  path: z.string().startsWith('/').optional(),
  /** Values of the operation template's parameters, to fill it when no path is given. */
  parameters: stringMap.default({}),
  query: stringMap.default({}),
  headers: stringMap.default({}),
  body: body.optional(),
  host: z.string().default('localhost'),
  scheme: z.enum(['http', 'https']).default('https'),
  clientAddress: z.string().default('127.0.0.1'),
  /** A PEM file (relative to the test file) presented as the client certificate over mutual TLS. */
  clientCertificate: z.string().optional(),
  /** Sent in the API's subscription key header. */
  subscriptionKey: z.string().optional(),
  jwt: jwtSchema.optional(),
});

const identitySchema = z.record(z.string(), z.unknown());

const contextSchema = z.strictObject({
  /** context.Variables before the first policy runs. */
  variables: z.record(z.string(), z.unknown()).default({}),
  /** Named values replacing the configuration's for this case (the policies are compiled again with them). */
  namedValues: stringMap.default({}),
  subscription: identitySchema.optional(),
  user: identitySchema.optional(),
  product: identitySchema.optional(),
});

/** A value a response part must have: the text exactly, or `{ regex }`, or `{ json }` (a subset of the JSON). */
export const textMatcherSchema = z.union([
  z.string(),
  z.strictObject({ regex: z.string() }),
  z.strictObject({ json: z.unknown() }),
  z.strictObject({ equals: z.string() }),
]);
export type TextMatcher = z.output<typeof textMatcherSchema>;

const headerExpectations = z.record(z.string(), z.union([textMatcherSchema, z.null()]));

const expectSchema = z.strictObject({
  status: z.number().int().optional(),
  /** Each header's value; `null`: the header is absent. */
  headers: headerExpectations.optional(),
  body: textMatcherSchema.optional(),
  /** The request the backend got; `false`: the backend was not called. */
  backend: z
    .union([
      z.literal(false),
      z.strictObject({
        method: z.string().optional(),
        url: textMatcherSchema.optional(),
        headers: headerExpectations.optional(),
        body: textMatcherSchema.optional(),
      }),
    ])
    .optional(),
  /** Calls the policies made (send-request, send-one-way-request …), in order; each entry a subset of one call. */
  calls: z
    .array(
      z.strictObject({
        method: z.string().optional(),
        url: textMatcherSchema.optional(),
        headers: headerExpectations.optional(),
        body: textMatcherSchema.optional(),
      }),
    )
    .optional(),
  /** context.Variables at the end (a subset; `null`: not set). */
  variables: z.record(z.string(), z.unknown()).optional(),
  /** context.LastError at the end (a subset of source, reason, message, section, path, policyId); `null`: none. */
  lastError: z.union([z.null(), z.record(z.string(), textMatcherSchema)]).optional(),
  /** Counter values after the request, by key. */
  counters: z.record(z.string(), z.number().int()).optional(),
  /** Cached values after the request, by key (`null`: not cached). */
  cache: z.record(z.string(), z.unknown()).optional(),
  /** Lines the trace must contain, in order: a substring each, or `{ regex }`. */
  trace: z.array(textMatcherSchema).optional(),
});

export const caseSchema = z
  .strictObject({
    name: z.string().min(1),
    /** The API (its id) and operation (its id) the request is for; or give `request.path` and `request.method`. */
    api: z.string().optional(),
    operation: z.string().optional(),
    request: requestSchema.default(requestSchema.parse({})),
    context: contextSchema.default(contextSchema.parse({})),
    stubs: stubsSchema.default(stubsSchema.parse({})),
    expect: expectSchema.default({}),
  })
  .refine((value) => value.operation === undefined || value.api !== undefined, {
    message: 'an operation needs its api',
    path: ['operation'],
  })
  .refine((value) => value.api !== undefined || value.request.path !== undefined, {
    message: 'give api (and operation) or request.path',
    path: ['request'],
  });

const keySchema = z.discriminatedUnion('algorithm', [
  z.strictObject({ algorithm: z.enum(['HS256', 'HS384', 'HS512']), secret: z.string().min(16) }),
  z.strictObject({
    algorithm: z.enum(['RS256', 'ES256']),
    /** An openid-config URL a validate-jwt names: answered with this key's JWKS (a key pair made for the run). */
    openidConfig: z.url().optional(),
    issuer: z.string().optional(),
  }),
]);

export const testFileSchema = z.strictObject({
  /** The gateway configuration, relative to this file; `--config` wins. */
  config: z.string().optional(),
  /** Signing keys the cases' JWTs name. */
  keys: z.record(z.string(), keySchema).default({}),
  /** Stubs every case starts from (a case's own stubs are added: its lists first, its maps over these). */
  stubs: stubsSchema.default(stubsSchema.parse({})),
  cases: z.array(caseSchema).min(1),
});

export type TestFile = z.output<typeof testFileSchema>;
export type TestCase = z.output<typeof caseSchema>;
export type Stubs = z.output<typeof stubsSchema>;
export type ResponseStub = z.output<typeof responseStubSchema>;
export type RoutedResponse = z.output<typeof routedResponseSchema>;
export type TestKey = z.output<typeof keySchema>;
export type Expectations = z.output<typeof expectSchema>;

/** A test file read and checked, with its text kept to place later problems (an unknown API) in it. */
export interface LoadedTestFile {
  readonly file: string;
  readonly directory: string;
  readonly text: string;
  readonly tests: TestFile;
}

/** Reads and checks a test file; throws ConfigError naming every problem with its line, column and key path. */
export async function loadTestFile(file: string): Promise<LoadedTestFile> {
  return parseTestFile(await readYamlFile(file), file);
}

export function parseTestFile(text: string, file: string): LoadedTestFile {
  const tests = parseYamlWith(testFileSchema, text, file);
  return { file, directory: path.dirname(path.resolve(file)), text, tests };
}

/** A case's stubs over the file's: lists of the case first (they win), maps merged with the case's values on top. */
export function mergeStubs(file: Stubs, own: Stubs): Stubs {
  return {
    ...((own.backend ?? file.backend) ? { backend: own.backend ?? file.backend } : {}),
    http: [...own.http, ...file.http],
    cache: { ...file.cache, ...own.cache },
    counters: { ...file.counters, ...own.counters },
    ...((own.time ?? file.time) ? { time: own.time ?? file.time } : {}),
    tokens: mergeByTwoNames(file.tokens, own.tokens),
    authorizations: mergeByTwoNames(file.authorizations, own.authorizations),
  };
}

/** The case's entries over the file's, name by name (a case adds a resource without repeating the identity's others). */
function mergeByTwoNames<T>(
  file: Readonly<Record<string, Readonly<Record<string, T>>>>,
  own: Readonly<Record<string, Readonly<Record<string, T>>>>,
): Record<string, Record<string, T>> {
  const merged: Record<string, Record<string, T>> = {};
  for (const name of new Set([...Object.keys(file), ...Object.keys(own)]))
    merged[name] = { ...file[name], ...own[name] };
  return merged;
}
