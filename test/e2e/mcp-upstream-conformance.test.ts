import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/config/plan.js';
import { HeadlessProvider } from '../doubles/mcp-oauth-provider.js';
import { startTokenProxy, type TokenProxy } from '../doubles/token-proxy.js';
import { type RunningChild, startChild } from '../processes/child.js';
import { conformanceOutput, runConformance } from '../processes/mcp-conformance.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';

/**
 * The official conformance suite's own reference server (its `everything-server.ts`, vendored in
 * test/fixtures/mcp-conformance) behind Portcullis as an API of type mcp: every server scenario of the suite, at every
 * revision it applies to, runs once directly against the reference server and once through Envoy and the engine at
 * the API's own URL (`/everything/mcp`, with a token from the authorization server added by a loopback proxy, since
 * the suite sends none). What passes directly must pass through the gateway; the few that cannot are listed in
 * `THROUGH_GATEWAY_ONLY_FAILS` with the reason, and any other difference fails the test.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const REFERENCE = path.join(root, 'test', 'fixtures', 'mcp-conformance', 'everything-server.ts');
const REDIRECT = 'http://127.0.0.1:47124/callback';

/**
 * Scenario@revision that pass directly and fail through the gateway, each with why. Empty is the goal; a scenario
 * listed here that starts passing fails the test too, so the list stays true.
 */
const THROUGH_GATEWAY_ONLY_FAILS: Record<string, string> = {};

let reference: RunningChild;
let referenceUrl: string;
let stack: Stack;
let proxy: TokenProxy;
let output: string;

beforeAll(async () => {
  const port = await freePort();
  referenceUrl = `http://127.0.0.1:${port}/mcp`;
  reference = await startChild(process.execPath, ['--import', 'tsx', REFERENCE], {
    what: 'the conformance reference server',
    ready: (out) => out.includes('MCP Conformance Test Server running'),
    env: { ...process.env, PORT: String(port) },
    cwd: root,
  });
  // The suite reaches the API under the proxy's authority, this deployment's local origin; any other Origin (the
  // DNS-rebinding scenario's) meets the engine's own check.
  const proxyPort = await freePort();
  stack = await startStack({
    mcpYaml: `mcp:\n  allowedOrigins: ["http://127.0.0.1:${proxyPort}"]`,
    apisYaml: `  - id: everything
    name: Everything
    type: mcp
    urlSuffix: everything
    serviceUrl: ${referenceUrl}`,
    productsYaml: '  - { id: tools, apis: [everything] }',
    authYaml: '  dataDir: auth-data',
  });
  // A token for the API's own URL through the real flow (401 → its metadata → registration → PKCE sign-in).
  const url = `${stack.gatewayUrl}/everything/mcp`;
  const provider = new HeadlessProvider({
    user: USERS.alice,
    clientName: 'conformance through the gateway',
    redirectUrl: REDIRECT,
    issuer: stack.issuer,
    scope: 'read:tools-work write:tools-work',
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await new Client({ name: 'token', version: '1.0.0' }).connect(transport).then(
    () => {
      throw new Error('expected the first connect to need authorization');
    },
    (error: unknown) => {
      if (!(error instanceof UnauthorizedError)) throw error;
    },
  );
  await transport.finishAuth(provider.code!);
  proxy = await startTokenProxy({
    upstream: stack.gatewayUrl,
    token: provider.tokens()!.access_token,
    port: proxyPort,
  });
  output = await mkdtemp(path.join(tmpdir(), 'portcullis-upstream-conformance-'));
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await stack?.stop();
  await reference?.stop();
  if (output) await rm(output, { recursive: true, force: true });
});

/** The suite's server scenarios (not the extensions) and the revisions each applies to, from its own `list`. */
async function serverScenarios(): Promise<{ scenario: string; version: string }[]> {
  const stdout = await conformanceOutput(['list']);
  const server = stdout.slice(stdout.indexOf('Server scenarios'), stdout.indexOf('Client scenarios'));
  return [...server.matchAll(/^\s+- (\S+) \[([^\]]+)\]$/gm)].flatMap(([, scenario, versions]) =>
    versions === 'extension' ? [] : versions!.split(',').map((version) => ({ scenario: scenario!, version })),
  );
}

/** The failures and warnings of one scenario at one revision against `url` (none: it passed). */
async function problems(url: string, scenario: string, version: string, tag: string): Promise<string[]> {
  const { checks, stdout } = await runConformance({
    args: ['server', '--url', url, '--scenario', scenario, '--spec-version', version],
    output,
    folder: `${tag}-${scenario}-${version}-`,
    written: `server-${scenario}-`,
    timeoutMs: 90_000,
  });
  if (!checks) return [`no results (${stdout.slice(-300)})`];
  return checks
    .filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
    .map((check) => `${check.id}: ${check.status} ${check.errorMessage ?? ''}`.trim());
}

/** Runs `work` over `items`, `limit` at a time. */
async function pooled<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const at = next++;
        results[at] = await work(items[at]!);
      }
    }),
  );
  return results;
}

describe("the conformance suite's reference server behind Portcullis (API of type mcp)", () => {
  it('every server scenario that passes directly passes through the gateway', async () => {
    const runs = await serverScenarios();
    expect(runs.length).toBeGreaterThan(50);
    const gatewayUrl = `${proxy.url}/everything/mcp`;
    const results = await pooled(runs, 6, async ({ scenario, version }) => ({
      key: `${scenario}@${version}`,
      direct: await problems(referenceUrl, scenario, version, 'direct'),
      gateway: await problems(gatewayUrl, scenario, version, 'gateway'),
    }));
    const onlyThroughGateway = Object.fromEntries(
      results
        .filter((result) => result.direct.length === 0 && result.gateway.length > 0)
        .map((result) => [result.key, result.gateway]),
    );
    expect(Object.keys(onlyThroughGateway).sort()).toEqual(Object.keys(THROUGH_GATEWAY_ONLY_FAILS).sort());
    // The gateway adds no failure to a scenario that already fails directly, either.
    for (const result of results.filter((r) => r.direct.length > 0))
      expect({ key: result.key, problems: result.gateway.map((p) => p.split(':')[0]) }).toEqual({
        key: result.key,
        problems: result.direct.map((p) => p.split(':')[0]),
      });
  }, 900_000);
});
