/**
 * The authorization server's endpoints against hostile forms: random and mutated fields for token, revocation,
 * introspection, registration (JSON), authorization, login and consent. Every answer is prompt, never a 5xx, never
 * shows a stack trace, and an OAuth error body (JSON) names an error code.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FuzzService, fuzzParameters, STACK_FRAME, startFuzzService, testTimeout } from './harness.js';

const BUDGET = { runs: 400, seconds: 5 };

const FIELDS = [
  'grant_type',
  'code',
  'redirect_uri',
  'client_id',
  'client_secret',
  'code_verifier',
  'refresh_token',
  'scope',
  'resource',
  'token',
  'token_type_hint',
  'response_type',
  'state',
  'code_challenge',
  'code_challenge_method',
  'username',
  'password',
  'decision',
  'interaction',
  'csrf',
  'nonce',
  'prompt',
  '__proto__',
  'constructor',
];
const VALUES = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'password',
  'code',
  'S256',
  'plain',
  'none',
  'http://127.0.0.1:43210/callback',
  'javascript:alert(1)',
  'read:courses-work write:courses-work',
  'allow',
  'deny',
  'alice',
  'correct horse battery staple',
  '',
  '%',
  '%00',
  'a'.repeat(5000),
];

const value = fc.oneof(fc.constantFrom(...VALUES), fc.string({ maxLength: 60 }));
const form = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 10 })), value), {
  maxLength: 10,
});

const encoded = fc.oneof(
  form.map((pairs) => new URLSearchParams(pairs).toString()),
  fc.string({ maxLength: 200 }),
  fc.constantFrom('a=%zz', '=&=&', '%%%', 'grant_type=authorization_code&grant_type=refresh_token'),
);

const registration = fc.oneof(
  fc
    .record(
      {
        redirect_uris: fc.oneof(
          fc.array(fc.oneof(fc.constantFrom(...VALUES), fc.webUrl()), { maxLength: 3 }),
          fc.jsonValue(),
        ),
        client_name: fc.oneof(fc.string({ maxLength: 40 }), fc.jsonValue()),
        grant_types: fc.oneof(fc.array(fc.constantFrom(...VALUES), { maxLength: 3 }), fc.jsonValue()),
        token_endpoint_auth_method: fc.oneof(
          fc.constantFrom('none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'),
          fc.jsonValue(),
        ),
        scope: fc.oneof(fc.constantFrom(...VALUES), fc.jsonValue()),
        jwks: fc.jsonValue({ maxDepth: 3 }),
      },
      { requiredKeys: [] },
    )
    .map((value) => JSON.stringify(value)),
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 200 }),
);

const request = fc.oneof(
  fc.record({
    method: fc.constant('POST'),
    path: fc.constantFrom(
      '/v1/token',
      '/v1/revoke',
      '/v1/introspect',
      '/v1/login',
      '/v1/consent',
      '/v1/authorize',
    ),
    body: encoded,
    contentType: fc.constantFrom(
      'application/x-www-form-urlencoded',
      'application/json',
      'text/plain',
      'multipart/form-data',
    ),
    authorization: fc.oneof(
      fc.constant(undefined),
      fc.constantFrom('Basic Og==', 'Basic %%%', 'Basic YTpi', 'Bearer x'),
      fc.string({ maxLength: 20 }).map((s) => `Basic ${Buffer.from(s).toString('base64')}`),
    ),
  }),
  fc.record({
    method: fc.constant('POST'),
    path: fc.constant('/v1/register'),
    body: registration,
    contentType: fc.constantFrom('application/json', 'application/x-www-form-urlencoded'),
    authorization: fc.constant(undefined),
  }),
  fc.record({
    method: fc.constant('GET'),
    path: fc.oneof(
      encoded.map((query) => `/v1/authorize?${query}`),
      fc.constantFrom('/v1/consent', '/.well-known/oauth-authorization-server', '/v1/jwks', '/v1/register/x'),
    ),
    body: fc.constant(undefined),
    contentType: fc.constant(undefined),
    authorization: fc.constant(undefined),
  }),
);

describe('fuzzing the OAuth endpoints', () => {
  let service: FuzzService;

  beforeAll(async () => {
    service = await startFuzzService();
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
  });

  it(
    'answers any form without a 5xx or a stack trace; JSON errors name an OAuth error code',
    async () => {
      await fc.assert(
        fc.asyncProperty(request, async ({ method, path, body, contentType, authorization }) => {
          const headers: Record<string, string> = {};
          if (contentType) headers['content-type'] = contentType;
          if (authorization) headers.authorization = authorization;
          const response = await fetch(`${service.url}${path}`, {
            method,
            headers,
            ...(body === undefined ? {} : { body }),
            redirect: 'manual',
            signal: AbortSignal.timeout(10_000),
          });
          const text = await response.text();
          expect(response.status, text).toBeLessThan(500);
          expect(text).not.toMatch(STACK_FRAME);
          if (response.status >= 400 && response.headers.get('content-type')?.includes('application/json')) {
            expect(typeof (JSON.parse(text) as { error?: unknown }).error, text).toBe('string');
          }
        }),
        { ...fuzzParameters(BUDGET), timeout: 15_000 },
      );
    },
    testTimeout(BUDGET),
  );
});
