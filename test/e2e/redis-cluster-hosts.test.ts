import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoadBalancer, startLoadBalancer } from '../doubles/load-balancer.js';
import { initializeMessage } from '../doubles/mcp.js';
import {
  insecure,
  type PublicClient,
  registerPublicClient,
  signInWithPkce,
} from '../doubles/oauth-client.js';
import { PageDriver } from '../doubles/stack-browser.js';
import { buildSegment, type Segment } from '../processes/netns.js';
import { type RunningRedisCluster, startRedisCluster } from '../processes/redis.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';
import { isCli, isEnvoy } from '../processes/up.js';

/**
 * Issue 23, beyond one machine: two gateway hosts — two network namespaces, each running its own `portcullis up`
 * (Envoy, engine, service, course backend) on its own address — share one real three-node Redis Cluster running
 * in a third namespace, whose nodes announce that namespace's address (so their MOVED redirections name an
 * address both hosts reach). A rate limit is exact across both hosts, the OAuth state one host issued (a refresh
 * token, its grant) is redeemed at the other, and an MCP session opened at one host is used and ended at the
 * other. The test process is joined to the hosts' network and calls each host at its address; the public URL
 * (the issuer of both) is a load balancer on the test's loopback in front of host A, and both hosts sign with one
 * key set.
 */

const SCOPE = 'read:courses-work write:courses-work';
const REDIRECT = 'http://127.0.0.1:43210/callback';
const CLIENT = '@(context.Request.Headers.GetValueOrDefault(&quot;X-Client&quot;, &quot;anonymous&quot;))';

type Host = 'host-a' | 'host-b' | 'redis';
let network: Segment<Host>;
let balancer: LoadBalancer;
let cluster: RunningRedisCluster;
let directory: string;
let a: Stack;
let b: Stack;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let registered: PublicClient;
const driver = new PageDriver();

beforeAll(async () => {
  network = await buildSegment<Host>(['host-a', 'host-b', 'redis']);
  cluster = await startRedisCluster({
    place: { host: network.address('redis'), commandPrefix: network.commandPrefix('redis') },
  });
  // The public URL is on loopback: the authorization server allows plain HTTP only there, not at the hosts'
  // private addresses (a real deployment would put HTTPS on the load balancer).
  balancer = await startLoadBalancer();
  directory = await mkdtemp(path.join(tmpdir(), 'portcullis-two-hosts-'));
  // The namespaces separate the network only: both hosts read this one key file, as if it were deployed to each.
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const keys = path.join(directory, 'keys.json');
  await writeFile(
    keys,
    JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: 'hosts-1', alg: 'ES256' }] }),
  );
  const shared = {
    authYaml: `  signingKeys: { file: ${JSON.stringify(keys)} }`,
    stateYaml: `state:\n  redis: { cluster: ${JSON.stringify(cluster.urls)}, keyPrefix: "hosts:", commandTimeoutMs: 1000 }`,
    policyXml: `<policies><inbound><rate-limit-by-key calls="10" renewal-period="60" counter-key="${CLIENT}" /></inbound><backend><forward-request /></backend><outbound /><on-error /></policies>`,
  };
  const onHost = (host: Host) => ({
    host: network.address(host),
    onHost: { commandPrefix: network.commandPrefix(host), testAddress: network.testAddress },
    publicUrl: balancer.url,
  });
  a = await startStack({ ...shared, ...onHost('host-a') });
  b = await startStack({ ...shared, ...onHost('host-b') });
  balancer.forwardTo(a.gatewayUrl);

  registered = await registerPublicClient(a.issuer, 'two hosts e2e', REDIRECT);
  ({ as, client } = registered);
}, 120_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await balancer?.close();
  await cluster?.close();
  // Also kills whatever of the hosts' processes a failed start left behind.
  await network?.remove();
  if (directory) await rm(directory, { recursive: true, force: true });
});

/** The authorization server's metadata with its endpoints at `host` (where the load balancer sent the call). */
const at = (host: Stack): oauth.AuthorizationServer => ({
  ...as,
  token_endpoint: as.token_endpoint!.replace(balancer.url, host.gatewayUrl),
});

/** The MCP endpoint's answer at `host` to an initialize with `token`: 200 for a token it accepts. */
async function mcpStatus(host: Stack, token: string): Promise<number> {
  const response = await fetch(`${host.gatewayUrl}/v1/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(initializeMessage('2025-06-18')),
  });
  await response.body?.cancel();
  return response.status;
}

describe('two gateway hosts sharing a Redis Cluster', () => {
  it('each host runs its own Envoy, engine and service in its own namespace, the cluster a third', async () => {
    for (const host of ['host-a', 'host-b'] as const) {
      const running = await network.processes(host);
      expect(running.some(isEnvoy), `an Envoy on ${host}`).toBe(true);
      expect(running.some(isCli('engine')), `an engine on ${host}`).toBe(true);
      expect(running.some(isCli('service')), `a service on ${host}`).toBe(true);
    }
    expect(await network.processes('redis')).toHaveLength(3);
    // The slot map (what clients and MOVED redirections go by) names the address both hosts reach.
    const announced = [...cluster.cli('CLUSTER', 'SHARDS').matchAll(/^ip\n(\S+)$/gm)].map((m) => m[1]);
    expect(new Set(announced)).toEqual(new Set([network.address('redis')]));
  });

  it('a rate limit of 10 per minute admits exactly 10 of 20 concurrent calls spread over both hosts', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const host = i % 2 === 0 ? a : b;
        const response = await fetch(`${host.gatewayUrl}/echo/things/rate`, {
          headers: { 'X-Client': `hosts-${process.pid}` },
        });
        await response.body?.cancel();
        return response.status;
      }),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(10);
  });

  it('a refresh token issued at host A is redeemed at host B, once', async () => {
    const issued = await signInWithPkce(registered, driver, USERS.alice, {
      scope: SCOPE,
      resource: a.mcpUrl,
    });
    expect(await mcpStatus(b, issued.access_token)).toBe(200);

    const refreshAt = (host: Stack, token: string) =>
      oauth.refreshTokenGrantRequest(at(host), client, oauth.None(), token, {
        ...insecure,
        additionalParameters: { resource: a.mcpUrl },
      });
    const rotated = await oauth.processRefreshTokenResponse(
      at(b),
      client,
      await refreshAt(b, issued.refresh_token!),
    );
    expect(rotated.refresh_token).toBeDefined();
    expect(await mcpStatus(b, rotated.access_token)).toBe(200);
    expect(await mcpStatus(a, rotated.access_token)).toBe(200);

    // Redeemed at B, the first refresh token is a replay at A.
    const replay = await refreshAt(a, issued.refresh_token!);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('an MCP session opened at host A is used at host B, and ended there for both', async () => {
    const { access_token: token } = await signInWithPkce(registered, driver, USERS.alice, {
      scope: SCOPE,
      resource: a.mcpUrl,
    });
    const send = (host: Stack, method: string, body?: unknown, session?: string) =>
      fetch(`${host.gatewayUrl}/v1/mcp`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const opened = await send(a, 'POST', initializeMessage('2025-11-25'));
    expect(opened.status).toBe(200);
    await opened.body?.cancel();
    const session = opened.headers.get('mcp-session-id')!;

    const initialized = await send(
      b,
      'POST',
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      session,
    );
    expect(initialized.status).toBe(202);
    const called = await send(
      b,
      'POST',
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'echo-thing', arguments: { name: 'hosts' } },
      },
      session,
    );
    expect(called.status).toBe(200);
    const answer = (await called.json()) as { result: { isError?: boolean; content: { text: string }[] } };
    expect(answer.result.isError).toBeFalsy();
    expect(JSON.parse(answer.result.content[0]!.text)).toMatchObject({ url: '/things/hosts' });

    expect((await send(b, 'DELETE', undefined, session)).status).toBe(204);
    const after = await send(a, 'POST', { jsonrpc: '2.0', id: 3, method: 'ping' }, session);
    expect(after.status).toBe(404);
    await after.body?.cancel();
  });
});
