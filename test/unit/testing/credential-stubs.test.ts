import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { type CaseResult, passed, reportLines, runSuite } from '../../../src/testing/suite.js';
import { scratchFolder } from '../../fixtures/scratch.js';

/**
 * The gateway's own credentials in policy tests: the identities' tokens and the credential manager's connections come
 * from the case's `tokens` and `authorizations` stubs, never from a token endpoint (the configured ones do not exist).
 */
const { write } = scratchFolder('credential-stubs');

beforeAll(() => {
  write(
    'gateway.yaml',
    `identities:
  default: vm
  sources:
    vm: { type: azure-imds, endpoint: "http://127.0.0.1:9/never-called" }
    partner: { type: client-credentials, tokenUrl: "http://127.0.0.1:9/token", clientId: partner-app, clientSecret: offline }
  credentialProviders:
    github:
      source: { type: client-credentials, tokenUrl: "http://127.0.0.1:9/gh-token", clientId: gh, clientSecret: offline }
      connections:
        repo: { resource: "https://api.github.example" }
apis:
  - id: storage
    urlSuffix: storage
    serviceUrl: http://storage.internal
    policy: storage.xml
    operations:
      - { id: read, method: GET, urlTemplate: "/blobs/{name}" }
`,
  );
  write(
    'storage.xml',
    `<policies>
  <inbound>
    <base />
    <authentication-managed-identity resource="https://storage.azure.com/" ignore-error="@(context.Request.Headers.ContainsKey(&quot;x-optional&quot;))" />
    <authentication-managed-identity resource="https://partner.example" client-id="partner-app" output-token-variable-name="partner-token" />
    <set-header name="x-partner-token" exists-action="override"><value>@((string)context.Variables["partner-token"])</value></set-header>
    <get-authorization-context provider-id="github" authorization-id="repo" context-variable-name="gh" ignore-error="@(context.Request.Headers.ContainsKey(&quot;x-optional&quot;))" />
    <set-header name="x-github-login" exists-action="override"><value>@(context.Variables["gh"] == null ? "none" : (string)((Authorization)context.Variables["gh"]).Claims["login"])</value></set-header>
  </inbound>
  <backend><base /></backend>
  <outbound><base /></outbound>
  <on-error><base /><set-header name="x-error" exists-action="override"><value>@(context.LastError.Reason)</value></set-header></on-error>
</policies>
`,
  );
});

/** base64url of a JWT with these claims (unsigned: the credential manager only decodes it). */
const jwt = (claims: object) =>
  `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;

const failures = (cases: readonly CaseResult[]) =>
  cases.filter((item) => !passed(item)).map((item) => reportLines({ cases: [item], coverage: new Map() }));

describe('token and connection stubs', () => {
  it('answers each identity by name or client-id and resource, and each connection with its claims', async () => {
    const file = write(
      'tokens.policy-test.yaml',
      `stubs:
  backend: { status: 200 }
  tokens:
    default: { "https://storage.azure.com/": storage-token }
    partner: { "*": partner-token }
  authorizations:
    github: { repo: "${jwt({ login: 'octocat' })}" }
cases:
  - name: the backend gets the default identity's token, the partner token and the connection's claims
    api: storage
    operation: read
    expect:
      status: 200
      backend:
        headers:
          authorization: Bearer storage-token
          x-partner-token: partner-token
          x-github-login: octocat
  - name: a failing source sends the request to on-error
    api: storage
    operation: read
    stubs: { tokens: { default: { "https://storage.azure.com/": { fail: "IMDS answered 400 identity not found" } } } }
    expect:
      status: 500
      backend: false
      headers: { x-error: ManagedIdentityTokenNotAcquired }
      lastError: { message: { regex: "resource: https://storage.azure.com/ failed: IMDS answered 400 identity not found" } }
  - name: ignore-error goes on without the token or the connection
    api: storage
    operation: read
    request: { headers: { x-optional: "1" } }
    stubs:
      tokens: { default: { "https://storage.azure.com/": { fail: down } } }
      authorizations: { github: { repo: { fail: "refresh token revoked" } } }
    expect:
      status: 200
      backend: { headers: { authorization: null, x-github-login: none } }
      variables: { gh: null }
`,
    );
    const result = await runSuite([file]);
    expect(failures(result.cases)).toEqual([]);
    expect(result.cases).toHaveLength(3);
  });

  it('fails a case whose policy asks for a credential it did not stub, naming the identity and the case', async () => {
    const file = write(
      'unstubbed.policy-test.yaml',
      `cases:
  - name: forgot the partner token
    api: storage
    operation: read
    request: { headers: { x-optional: "1" } }
    stubs:
      backend: { status: 200 }
      tokens: { default: { "*": storage-token } }
      authorizations: { github: { repo: gh-token } }
    expect: { status: 500 }
`,
    );
    const result = await runSuite([file]);
    const [item] = result.cases;
    expect(passed(item!)).toBe(false);
    const lines = reportLines(result);
    expect(lines).toContain(
      '     stubs.tokens.partner: expected a token for resource "https://partner.example", got no stub (a case must stub every credential its policies ask for; `{ fail }` tests a failure)',
    );
    expect(item!.outcome!.lastError?.message).toContain(
      'case "forgot the partner token": no stub for identity "partner" (client-id "partner-app") and resource "https://partner.example"',
    );
    // Nothing reached for the configured endpoints: the only calls are none at all.
    expect(item!.outcome!.calls).toEqual([]);
  });

  it('places a malformed token stub at its line and column', async () => {
    const file = write(
      'broken.policy-test.yaml',
      `cases:
  - name: broken
    api: storage
    operation: read
    stubs:
      tokens: { default: { "*": { failure: nope } } }
`,
    );
    const error = await runSuite([file]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(
      `${file}:6:28: cases[0].stubs.tokens.default.*: matches none of the forms allowed here`,
    );
  });
});
