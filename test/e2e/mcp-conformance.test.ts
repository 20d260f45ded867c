import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/config/plan.js';
import { PageDriver } from '../doubles/stack-browser.js';
import { type ProxyAnswer, startTokenProxy, type TokenProxy } from '../doubles/token-proxy.js';
import {
  CONFORMANCE_LATEST_CLI,
  type ConformanceCheck,
  runConformance,
} from '../processes/mcp-conformance.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';
import { until } from '../processes/wait.js';

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, server mode) against the endpoint as
 * `portcullis up` serves it, through Envoy. The suite sends no token, so it talks to a loopback proxy that adds
 * one obtained through the real OAuth flow; authentication stays on.
 *
 * The suite is pinned to 0.2.0-alpha.12: the latest stable (0.1.16) has no `server-session-lifecycle` scenario
 * and no wire-schema check. 0.1.16 is installed too (npm alias `mcp-conformance-0.1.16`) for the one scenario whose
 * requests differ between the two: its `server-sse-multiple-streams` sends an older supported
 * `MCP-Protocol-Version` inside a session (issue #35). Its CLI needs Node ≥ 22 (`fs.globSync`): it runs on the project's own Node 24 (the
 * pinned one setup unpacks when the machine's is older). Each scenario runs at every
 * revision it applies to (`--spec-version`). Scenarios that do not apply: `tools-call-*`, `tools-call-error`,
 * `json-schema-2020-12`, `server-sse-polling` and `input-required-result-*` call the suite's own fixture tools
 * (`test_simple_text`, `json_schema_2020_12_tool`, `test_reconnection`, …), which a gateway serving its APIs does not
 * have; `logging-set-level`, `completion-complete`, `resources-*`, `prompts-*`, `elicitation-*` and
 * `sep-2164-resource-not-found` test features the endpoint does not offer; `sep-2640-*` and `tasks-*` are extensions
 * it does not implement. Within a scenario that applies, each check that needs a fixture tool is listed with the
 * suite's "Not testable" message (see `expectChecks`).
 */

const REDIRECT = 'http://127.0.0.1:47124/callback';
const SCOPE = 'read:courses-work read:grades-work write:courses-work';

type Check = ConformanceCheck;

let stack: Stack;
let proxy: TokenProxy;
let output: string;

/** An access token for the MCP endpoint through the real flow: registration, login + consent pages, PKCE. */
async function accessToken(): Promise<string> {
  const registered = await fetch(`${stack.gatewayUrl}/v1/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'MCP conformance proxy',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  });
  expect(registered.status).toBe(201);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${stack.gatewayUrl}/v1/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: SCOPE,
    state: 'conformance',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource: stack.mcpUrl,
  }).toString();
  const callback = await new PageDriver().authorize(authorize.href, USERS.alice);
  const code = callback.searchParams.get('code');
  expect(code).toBeTruthy();
  const token = await fetch(`${stack.gatewayUrl}/v1/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: REDIRECT,
      client_id: clientId,
      code_verifier: verifier,
      resource: stack.mcpUrl,
    }),
  });
  expect(token.status).toBe(200);
  return ((await token.json()) as { access_token: string }).access_token;
}

/**
 * Runs one scenario of the suite in Node 22 and returns the checks it wrote (`<run directory>/<prefix>-<scenario>-<ts>/
 * checks.json`; one directory per run, so a scenario can run at several revisions): a server scenario against the
 * MCP endpoint (through the token proxy) at `specVersion` when given (else the suite's default for it), or an
 * authorization-server scenario against the issuer (through Envoy); `suite` is the CLI of another release.
 */
async function runScenario(
  scenario: string,
  options: { against?: 'server' | 'authorization'; specVersion?: string; suite?: string } = {},
): Promise<{ checks: Check[]; exitCode: number; stdout: string }> {
  const against = options.against ?? 'server';
  const target =
    against === 'server'
      ? ['server', '--url', `${proxy.url}/v1/mcp`]
      : ['authorization', '--url', stack.issuer];
  const version = options.specVersion ? ['--spec-version', options.specVersion] : [];
  const prefix = against === 'server' ? 'server' : 'authorization-server';
  const { checks, exitCode, stdout } = await runConformance({
    args: [...target, '--scenario', scenario, ...version],
    output,
    folder: `${scenario}-`,
    written: `${prefix}-${scenario}-`,
    timeoutMs: 30_000,
    ...(options.suite ? { suite: options.suite } : {}),
  });
  if (!checks) throw new Error(`the suite wrote no results for ${scenario} (exit ${exitCode}):\n${stdout}`);
  return { checks, exitCode, stdout };
}

/** echo-thing's description as a 2026-07-28 `tools/list` shows it now (through the proxy: its Host is allowed). */
async function echoThingDescription(): Promise<string | undefined> {
  const response = await fetch(`${proxy.url}/v1/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const { result } = (await response.json()) as {
    result: { tools: { name: string; description?: string }[] };
  };
  return result.tools.find((tool) => tool.name === 'echo-thing')?.description;
}

const ECHO_THING = '      - id: echo-thing\n';
const DESCRIBED = '        description: Echoes one thing back.\n';

/**
 * The suite changes the tool list through a hook its own fixture servers have, a `tools/call` of
 * `test_trigger_tool_change`. The gateway's tools change with its configuration, so the proxy answers that call
 * itself with a real change: it gives echo-thing a description in the configuration file (the next time, takes it
 * away), `up` reloads the file, and the endpoint announces `notifications/tools/list_changed` to every listen stream
 * that asked for it. A description, not a new operation: a new method + URL template changes Envoy's routes too
 * (validated, then taken in place: about half a second), too close to the suite's 1.5 s wait on the stream. The proxy
 * answers once the new definition is served, so the change has happened when the suite reads on.
 */
async function changeToolsOnTrigger(body: Buffer): Promise<ProxyAnswer | undefined> {
  let message: { id?: unknown; method?: unknown; params?: { name?: unknown } };
  try {
    message = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (message.method !== 'tools/call' || message.params?.name !== 'test_trigger_tool_change')
    return undefined;
  const text = await readFile(stack.configFile, 'utf8');
  const adding = !text.includes(DESCRIBED);
  await writeFile(
    stack.configFile,
    adding ? text.replace(ECHO_THING, ECHO_THING + DESCRIBED) : text.replace(DESCRIBED, ''),
  );
  await until(
    async () => (await echoThingDescription())?.startsWith('Echoes one thing back.') === adding,
    `the gateway to serve echo-thing ${adding ? 'with' : 'without'} its description after the configuration changed`,
    { timeoutMs: 10_000, everyMs: 20 },
  );
  const done = `${adding ? 'gave echo-thing a description' : "took echo-thing's description away"}`;
  return {
    status: 200,
    body: {
      jsonrpc: '2.0',
      id: message.id,
      result: {
        content: [{ type: 'text', text: `The token proxy ${done} in the gateway's configuration file.` }],
        resultType: 'complete',
      },
    },
  };
}

beforeAll(async () => {
  // The suite needs Node 22 or newer; `npm test` runs the tests on the supported Node (scripts/node-runtime.js).
  if (Number(process.versions.node.split('.')[0]) < 22) {
    throw new Error(
      `the MCP conformance suite needs Node 22 or newer; these tests run on ${process.version}`,
    );
  }
  const proxyPort = await freePort();
  const proxyAuthority = `127.0.0.1:${proxyPort}`;
  // The suite's clients reach the endpoint under the proxy's authority: it is this deployment's local origin,
  // allowed like a browser app's would be. Nothing else is, so the DNS-rebinding request meets the real checks.
  stack = await startStack({
    mcpYaml: `mcp:\n  allowedOrigins: ["http://${proxyAuthority}"]\n  allowedHosts: ["${proxyAuthority}"]`,
  });
  proxy = await startTokenProxy({
    upstream: stack.gatewayUrl,
    token: await accessToken(),
    port: proxyPort,
    answer: changeToolsOnTrigger,
  });
  output = await mkdtemp(path.join(tmpdir(), 'portcullis-conformance-'));
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await stack?.stop();
  if (output) await rm(output, { recursive: true, force: true });
});

/** What every scenario must show: exit 0, the summary line, and every check a SUCCESS (no failure, no warning). */
function expectAllPassed(
  result: { checks: Check[]; exitCode: number; stdout: string },
  ids: readonly string[],
) {
  expect(result.checks.map((check) => [check.id, check.status, check.errorMessage])).toEqual(
    ids.map((id) => [id, 'SUCCESS', undefined]),
  );
  expect(result.stdout).toContain(`Passed: ${ids.length}/${ids.length}, 0 failed, 0 warnings`);
  expect(result.exitCode).toBe(0);
}

describe('MCP conformance suite (server mode) through the token proxy and Envoy', () => {
  it('authentication is on: a token-less initialize under the proxy’s Host, straight to Envoy, is 401', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    });
    // node:http rather than fetch, which does not let a caller set `Host`.
    const { status, challenge } = await new Promise<{ status?: number; challenge?: string }>(
      (resolve, reject) => {
        const gateway = new URL(stack.mcpUrl);
        const sent = httpRequest(
          {
            host: gateway.hostname,
            port: gateway.port,
            path: gateway.pathname,
            method: 'POST',
            headers: {
              host: proxy.authority,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            },
          },
          (response) => {
            response.resume();
            resolve({ status: response.statusCode, challenge: response.headers['www-authenticate'] });
          },
        );
        sent.on('error', reject);
        sent.end(body);
      },
    );
    expect(status).toBe(401);
    // What initialize needs: the read scopes (MCP 2025-11-25 scope selection).
    expect(challenge).toBe(
      `Bearer scope="read:courses-work read:grades-work", resource_metadata="${stack.gatewayUrl}/.well-known/oauth-protected-resource/v1/mcp"`,
    );
  });

  it('server-initialize: the handshake the suite checks, answered by portcullis', async () => {
    const result = await runScenario('server-initialize');
    expectAllPassed(result, ['server-initialize', 'server-session-id-visible-ascii', 'wire-schema-valid']);
    expect(result.checks[0]!.details).toEqual({ serverUrl: `${proxy.url}/v1/mcp`, connected: true });
  });

  it('server-session-lifecycle: initialized → 202, DELETE accepted, the ended session is 404', async () => {
    const before = proxy.log.length;
    const result = await runScenario('server-session-lifecycle');
    expectAllPassed(result, [
      'server-session-initialized-accepted',
      'server-session-delete-accepted',
      'server-session-terminated-returns-404',
    ]);
    expect(result.checks.map((check) => check.details)).toEqual([
      { statusCode: 202 },
      { statusCode: 204 },
      { statusCode: 404 },
    ]);
    expect(proxy.log.slice(before).map((line) => line.replace(/ host=.*->/, ' ->'))).toEqual([
      'POST /v1/mcp -> 200',
      'POST /v1/mcp -> 202',
      'DELETE /v1/mcp -> 204',
      'POST /v1/mcp -> 404',
    ]);
  });

  it('ping', async () => {
    const result = await runScenario('ping');
    expectAllPassed(result, ['ping', 'wire-schema-valid']);
    expect(result.checks[0]!.details).toEqual({ result: {} });
  });

  it('tools-list: the gateway’s operations, as the token’s scopes allow', async () => {
    const result = await runScenario('tools-list');
    expectAllPassed(result, ['tools-list', 'tools-name-format', 'wire-schema-valid']);
    expect(result.checks[0]!.details).toEqual({
      toolCount: 5,
      tools: ['create-course', 'echo-thing', 'get-course', 'list-courses', 'list-grades'],
    });
  });

  it('dns-rebinding-protection: a foreign Host/Origin is refused by the endpoint, the local one served', async () => {
    const before = proxy.log.length;
    const result = await runScenario('dns-rebinding-protection');
    expectAllPassed(result, ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted']);
    const [rejected, accepted] = result.checks;
    // The refusal is the endpoint's own Host check (its JSON-RPC error), not Envoy's or the proxy's.
    expect(rejected!.details).toEqual({
      hostHeader: 'evil.example.com',
      originHeader: 'http://evil.example.com',
      statusCode: 403,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Forbidden: Host "evil.example.com" is not allowed' },
      },
    });
    expect(accepted!.details).toMatchObject({
      hostHeader: proxy.authority,
      originHeader: proxy.url,
      statusCode: 200,
      body: { jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'portcullis' } } },
    });
    // The requests went through the proxy with their Host/Origin untouched (then the suite's `initialized`).
    expect(proxy.log.slice(before, before + 2)).toEqual([
      'POST /v1/mcp host=evil.example.com origin=http://evil.example.com -> 403',
      `POST /v1/mcp host=${proxy.authority} origin=${proxy.url} -> 200`,
    ]);
  });
});

describe('MCP conformance suite (authorization server mode) through Envoy', () => {
  it('authorization-server-metadata-endpoint: valid RFC 8414 metadata, Client ID Metadata Documents supported', async () => {
    const result = await runScenario('authorization-server-metadata-endpoint', { against: 'authorization' });
    expectAllPassed(result, ['authorization-server-metadata', 'authorization-server-metadata-cimd']);
  });
});

/**
 * A check the suite cannot exercise against a gateway: it needs one of the suite's own fixture tools, or a feature
 * the endpoint does not offer. The suite reports these as FAILURE ("Not testable: …") or WARNING; they are listed
 * here one by one with the suite's own words, so any other failure or warning still fails the test.
 */
type Expected = readonly [id: string, status: Check['status'], errorMessage?: string];

function expectChecks(result: { checks: Check[]; stdout: string }, expected: readonly Expected[]) {
  expect(result.checks.map((check) => [check.id, check.status, check.errorMessage])).toEqual(
    expected.map(([id, status, message]) => [id, status, message]),
  );
  const counted = expected.filter(([, status]) => status === 'SUCCESS' || status === 'FAILURE');
  const passed = counted.filter(([, status]) => status === 'SUCCESS').length;
  const warnings = expected.filter(([, status]) => status === 'WARNING').length;
  expect(result.stdout).toContain(
    `Passed: ${passed}/${counted.length}, ${counted.length - passed} failed, ${warnings} warnings`,
  );
}

const ok = (...ids: string[]): Expected[] => ids.map((id) => [id, 'SUCCESS']);

describe('MCP conformance suite at every revision each scenario applies to, 2026-07-28 included', () => {
  const at = (scenario: string, versions: readonly string[], ids: readonly string[]) =>
    it.each(versions)(`${scenario} at %s`, async (version) => {
      expectAllPassed(await runScenario(scenario, { specVersion: version }), ids);
    });

  at(
    'server-initialize',
    ['2025-06-18', '2025-11-25'],
    ['server-initialize', 'server-session-id-visible-ascii', 'wire-schema-valid'],
  );
  at(
    'server-session-lifecycle',
    ['2025-03-26', '2025-06-18', '2025-11-25'],
    [
      'server-session-initialized-accepted',
      'server-session-delete-accepted',
      'server-session-terminated-returns-404',
    ],
  );
  at('ping', ['2025-06-18', '2025-11-25'], ['ping', 'wire-schema-valid']);
  at('tools-list', ['2025-06-18'], ['tools-list', 'wire-schema-valid']);
  at('tools-list', ['2025-11-25'], ['tools-list', 'tools-name-format', 'wire-schema-valid']);
  at(
    'tools-list',
    ['2026-07-28'],
    ['tools-list', 'tools-name-format', 'tools-list-deterministic-order', 'wire-schema-valid'],
  );
  at(
    'dns-rebinding-protection',
    ['2025-11-25', '2026-07-28'],
    ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted'],
  );
  at(
    'http-header-validation',
    ['2026-07-28'],
    [
      ...['sep-2243-server-reject-invalid-headers', 'sep-2243-server-reject-error-code'],
      ...['sep-2243-server-reject-invalid-headers', 'sep-2243-server-reject-error-code'],
      ...['sep-2243-server-reject-invalid-headers', 'sep-2243-server-reject-error-code'],
      'sep-2243-server-accepts-whitespace-header-value',
      ...['sep-2243-server-reject-invalid-headers', 'sep-2243-server-reject-error-code'],
      'sep-2243-header-name-case-insensitive',
      'sep-2243-header-name-case-insensitive',
      ...['sep-2243-server-reject-invalid-headers', 'sep-2243-server-reject-error-code'],
      'wire-schema-valid',
    ],
  );

  it('http-custom-header-server-validation (SEP-2243) at 2026-07-28: echo-thing’s X-Trace header parameter, mirrored as Mcp-Param-X-Trace', async () => {
    const before = stack.echo.received.length;
    const result = await runScenario('http-custom-header-server-validation', { specVersion: '2026-07-28' });
    expectAllPassed(result, [
      'sep-2243-server-decode-base64',
      ...['sep-2243-server-reject-invalid-param-chars', 'sep-2243-server-reject-param-mismatch'],
      ...['sep-2243-server-reject-invalid-param-chars', 'sep-2243-server-reject-param-mismatch'],
      'sep-2243-server-validate-param-match',
      'sep-2243-server-validate-param-match',
      ...['sep-2243-server-validate-param-match', 'sep-2243-server-reject-param-mismatch'],
      'wire-schema-valid',
    ]);
    expect(result.checks[0]!.details).toMatchObject({
      toolName: 'echo-thing',
      paramName: 'X-Trace',
      headerSuffix: 'X-Trace',
      headerValue: '=?base64?SGVsbG8=?=',
      responseStatus: 200,
    });
    // The three accepted calls reached the backend with the body's value; the refused ones did not.
    expect(
      stack.echo.received.slice(before).map((request) => [request.url, request.headers['x-trace']]),
    ).toEqual([
      ['/things/test-default', 'Hello'],
      ['/things/test-default', 'SGVsbG8='],
      ['/things/test-default', '=?base64?SGVsbG8='],
    ]);
  });

  it.each(['2025-11-25', '2026-07-28'])(
    'server-sse-multiple-streams at %s: three concurrent POSTs answered (in JSON: SSE is the client’s option)',
    async (version) => {
      const result = await runScenario('server-sse-multiple-streams', { specVersion: version });
      expectChecks(result, [
        ['server-accepts-multiple-post-streams', 'SUCCESS'],
        ['server-sse-streams-functional', 'INFO'],
      ]);
      expect(result.exitCode).toBe(0);
    },
  );

  it('server-sse-multiple-streams of the latest release (0.1.16): its POSTs say MCP-Protocol-Version 2025-03-26 in a 2025-11-25 session, and are answered', async () => {
    const before = proxy.log.length;
    const result = await runScenario('server-sse-multiple-streams', { suite: CONFORMANCE_LATEST_CLI });
    expectChecks(result, [
      ['server-accepts-multiple-post-streams', 'SUCCESS'],
      ['server-sse-streams-functional', 'INFO'],
    ]);
    expect(result.checks[0]!.details).toMatchObject({ numStreamsAccepted: 3, statuses: [200, 200, 200] });
    expect(result.exitCode).toBe(0);
    // initialize, notifications/initialized, then the three tools/list sent with the older supported version (the
    // SDK's GET stream, opened beside them, left out).
    const posts = proxy.log.slice(before).filter((line) => line.startsWith('POST'));
    expect(posts.map((line) => line.replace(/ host=.*->/, ' ->'))).toEqual([
      'POST /v1/mcp -> 200',
      'POST /v1/mcp -> 202',
      ...Array(3).fill('POST /v1/mcp -> 200'),
    ]);
  });

  it('server-stateless (SEP-2575) at 2026-07-28: every check but those that need the suite’s fixture tools; tool changes are real reloads', async () => {
    const untestable = (tool: string, what: string): string =>
      `Not testable: server does not list the diagnostic tool '${tool}' in tools/list${what}`;
    const configuration = await readFile(stack.configFile, 'utf8');
    const before = proxy.log.length;
    const result = await runScenario('server-stateless', { specVersion: '2026-07-28' });
    // Each trigger the suite sent (three in this scenario) was a real configuration change, answered once served.
    expect(proxy.log.slice(before).filter((line) => line.endsWith('(proxy)'))).toEqual(
      Array(3).fill('POST /v1/mcp -> 200 (proxy)'),
    );
    // The configuration as it was, for the scenarios after this one.
    await writeFile(stack.configFile, configuration);
    await until(
      async () => !(await echoThingDescription())?.startsWith('Echoes one thing back.'),
      'echo-thing without the description the triggers gave it',
      10_000,
    );
    expectChecks(result, [
      ...ok('sep-2575-request-meta-invalid-missing-meta', 'sep-2575-http-server-meta-invalid-400'),
      ...ok(
        'sep-2575-request-meta-invalid-missing-protocol-version',
        'sep-2575-http-server-meta-invalid-400',
      ),
      ...ok(
        'sep-2575-request-meta-invalid-missing-client-capabilities',
        'sep-2575-http-server-meta-invalid-400',
      ),
      ...ok(
        'sep-2575-request-meta-client-info-optional',
        'sep-2575-server-implements-discover',
        'sep-2575-server-identifies-in-result-meta',
        'sep-2575-server-declares-prompts-in-discover',
        'sep-2575-discover-capabilities-match-handlers',
        'sep-2575-server-unsupported-version-error',
        'sep-2575-http-server-unsupported-version-400',
        'sep-2575-http-server-header-mismatch-400',
      ),
      // No gateway operation needs a client capability (sampling, elicitation, roots): there is nothing to refuse.
      [
        'sep-2575-server-rejects-undeclared-capability',
        'FAILURE',
        untestable(
          'test_missing_capability',
          ' and the probe call did not exercise it (required for the undeclared-capability rejection)',
        ),
      ],
      [
        'sep-2575-missing-capability-http-400',
        'FAILURE',
        untestable('test_missing_capability', ', so the -32021 HTTP status could not be validated'),
      ],
      ...ok(
        'sep-2575-http-server-method-not-found-404-initialize',
        'sep-2575-http-server-method-not-found-404-ping',
        'sep-2575-http-server-method-not-found-404-logging-setlevel',
        'sep-2575-http-server-method-not-found-404-resources-subscribe',
        'sep-2575-http-server-method-not-found-404-resources-unsubscribe',
        'sep-2575-http-server-method-not-found-404',
      ),
      // The gateway never asks the client for input, and it offers no logging: nothing to stream or to log.
      [
        'sep-2575-http-server-no-independent-requests-on-stream',
        'FAILURE',
        untestable('test_streaming_elicitation', ', so the response stream could not be exercised'),
      ],
      [
        'sep-2575-server-no-log-without-loglevel',
        'FAILURE',
        untestable(
          'test_logging_tool',
          ', so the no-log-without-logLevel requirement could not be exercised',
        ),
      ],
      ...ok(
        'sep-2575-server-sends-subscription-ack',
        'sep-2575-server-tags-subscription-id',
        'sep-2575-server-honors-notification-filter',
      ),
      ['sep-2575-server-sends-prompts-list-changed-on-subscription', 'SKIPPED'],
      // The token proxy answers the suite's `test_trigger_tool_change` with a real configuration change (see
      // changeToolsOnTrigger): the filtered stream gets nothing, the tools stream gets the notification.
      ['sep-2575-server-sends-tools-list-changed-on-subscription', 'SUCCESS'],
      ['sep-2575-http-server-error-jsonrpc-id', 'SUCCESS'],
    ]);
  });

  it('caching (SEP-2549) at 2026-07-28: tools/list carries the hints; prompts and resources are not offered', async () => {
    const notOffered = (method: string): Expected => [
      `sep-2549-${method.replace(/\//g, '-')}-caching-hints`,
      'FAILURE',
      `${method} returned JSON-RPC error -32601: Method not found: ${method}`,
    ];
    expectChecks(await runScenario('caching', { specVersion: '2026-07-28' }), [
      ['sep-2549-tools-list-caching-hints', 'SUCCESS'],
      notOffered('prompts/list'),
      notOffered('resources/list'),
      notOffered('resources/templates/list'),
      [
        'sep-2549-resources-read-caching-hints',
        'SKIPPED',
        'resources/read was not exercised: resources/list failed or returned no resources.',
      ],
      ...ok('sep-2549-ttl-non-negative', 'sep-2549-cache-scope-valid', 'wire-schema-valid'),
    ]);
  });
});
