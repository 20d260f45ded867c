import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { hashPassword } from '../../src/auth/index.js';
import { type EchoBackend, startEchoBackend } from '../doubles/echo-backend.js';
import { type LoadStream, load, markingPolicy, servedAgainSince } from '../doubles/load.js';
import { portlessGateway } from '../processes/portless-gateway.js';
import { listeningPortsOf } from '../processes/process-tree.js';
import { isCli, isEnvoy, printedUrl, processesOf, saidBy, startUp, type UpRun } from '../processes/up.js';
import { until } from '../processes/wait.js';

const ADMIN = { name: 'admin', password: 'management password for the supervision test' };

/** The portless gateway, with a user and a management listener (its port left to the system too). */
async function portlessConfig(echo: EchoBackend): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-supervise-'));
  const file = path.join(directory, 'gateway.yaml');
  // A policy, so that every request goes through the engines (an API without any is served by Envoy alone).
  await writeFile(path.join(directory, 'echo.xml'), markingPolicy('supervised'));
  const gateway = portlessGateway(echo.url, 'echo.xml');
  await writeFile(
    file,
    stringify({
      ...gateway,
      auth: {
        ...gateway.auth,
        users: [{ username: 'alice', passwordHash: await hashPassword('alice password for the test') }],
      },
      management: {
        listen: { host: '127.0.0.1', port: 0 },
        administrators: [{ name: ADMIN.name, passwordHash: await hashPassword(ADMIN.password) }],
      },
    }),
  );
  return file;
}

interface Gap {
  /** From the kill to the first 200 after the last failed request. */
  readonly gapMs: number;
  /** Requests that failed (5xx or no answer) after the kill. */
  readonly failed: number;
  /** Requests answered 200 between the kill and the restart. */
  readonly servedMeanwhile: number;
  /** The longest any request took after the kill. */
  readonly slowestMs: number;
}

/** What a load stream saw after `killedAt`, the child being back at `backAt`. */
function measure(stream: LoadStream, killedAt: number, backAt: number): Gap {
  const events = [
    ...stream.results.map((result) => ({ ...result, ok: result.status === 200 })),
    ...stream.failures.map((failure) => ({ ...failure, ok: false, status: 0 })),
  ]
    .filter((event) => event.at >= killedAt)
    .sort((a, b) => a.at - b.at);
  const bad = events.filter((event) => !event.ok);
  const lastBad = bad.at(-1);
  const firstOkAfter = lastBad ? events.find((event) => event.ok && event.at > lastBad.at) : undefined;
  return {
    gapMs: lastBad ? (firstOkAfter?.at ?? Number.POSITIVE_INFINITY) - killedAt : 0,
    failed: bad.length,
    servedMeanwhile: events.filter((event) => event.ok && event.at < backAt).length,
    slowestMs: Math.max(0, ...events.map((event) => event.ms)),
  };
}

describe('portcullis up supervises its children', () => {
  let echo: EchoBackend;
  let run: UpRun;
  let gateway: string;

  beforeAll(async () => {
    echo = await startEchoBackend();
    run = startUp(await portlessConfig(echo));
    await run.waitFor('Press Ctrl-C to stop.');
    gateway = printedUrl(run.output(), 'gateway');
  }, 60_000);

  afterAll(async () => {
    if (run) expect(await run.stop()).toBe(0);
    await echo?.close();
  }, 30_000);

  it('starts with every port left to the system: each process binds its own, Envoy is configured with them', async () => {
    expect(gateway).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
    // Both engines serve: Envoy was configured with the ports they reported.
    for (let request = 0; request < 10; request++) {
      const response = await fetch(`${gateway}/echo/things/${request}`);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    const engineLines = (name: string) =>
      run
        .output()
        .split('\n')
        .filter((line) => line.startsWith(`[${name}] `) && line.includes(' api=echo'));
    // Access lines reach the log up to 50 ms late (src/log.ts gathers them).
    await until(
      () => engineLines('engine-1').length > 0 && engineLines('engine-2').length > 0,
      'an access line from each engine',
      10_000,
    );
    // The service, through Envoy's routes, and it knows the gateway URL Envoy's listener got.
    const metadata = await fetch(`${gateway}/.well-known/oauth-authorization-server`);
    expect(metadata.status).toBe(200);
    expect(((await metadata.json()) as { issuer: string }).issuer).toBe('http://localhost');
    expect(saidBy(run.output(), 'service', `tool calls go through ${gateway}`)).toBe(true);
    // The management API behind its listener, and Envoy's readiness through the admin cluster.
    const management = printedUrl(run.output(), 'management');
    const basic = `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}`;
    const apis = await fetch(`${management}/apis`, { headers: { authorization: basic } });
    expect(apis.status).toBe(200);
    expect(await (await fetch(`${management}/ready`)).text()).toContain('LIVE');
    expect(await (await fetch(`${printedUrl(run.output(), 'envoy admin')}/ready`)).text()).toContain('LIVE');
    expect(run.output()).not.toContain('EADDRINUSE');
  });

  /**
   * SIGKILL to one child under steady load: up restarts it (a logged, counted restart), requests in the gap fail
   * promptly (5xx or a refused connection, never a hang) and the gateway serves again by itself.
   */
  async function killUnderLoad(
    family: string,
    victim: number,
    stream: LoadStream,
  ): Promise<Gap & { stream: LoadStream }> {
    await until(() => stream.results.filter((result) => result.status === 200).length >= 20, 'steady load');
    const before = run.output().length;
    const killedAt = Date.now();
    process.kill(victim, 'SIGKILL');
    await until(
      () =>
        run
          .output()
          .includes(`${family} exited (killed by SIGKILL); restarting in 100 ms (restart 1)`, before),
      `the restart of ${family} announced`,
      10_000,
    );
    await until(
      () => saidBy(run.output(), 'up', `${family} is back (restart 1)`, before),
      `${family} back`,
      20_000,
    );
    const backAt = Date.now();
    // Serving again by itself: a run of answers, all 200.
    await until(() => servedAgainSince(stream, backAt), 'requests answered again', 15_000);
    await stream.stop();
    const gap = measure(stream, killedAt, backAt);
    console.log(
      `${family}: SIGKILL → first 200 after the last failure ${gap.gapMs} ms; ${gap.failed} failed, ${gap.servedMeanwhile} answered 200 before it was back, slowest request ${gap.slowestMs} ms`,
    );
    expect(gap.gapMs).toBeLessThan(10_000);
    // Prompt: nothing waited for the client's timeout.
    expect(gap.slowestMs).toBeLessThan(5000);
    expect(stream.failures.filter((failure) => failure.error.includes('TimeoutError'))).toEqual([]);
    // What answered at all answered 200 or 5xx: a gap is never a 4xx blamed on the client.
    expect(stream.results.filter((result) => result.status !== 200 && result.status < 500)).toEqual([]);
    return { ...gap, stream };
  }

  it('restarts Envoy killed under load: a fresh epoch binds the same ports, the engines and the service are untouched', async () => {
    const others = processesOf(run, (argv) => isCli('engine')(argv) || isCli('service')(argv));
    // One Envoy serves (the one before it has drained and exited).
    await until(() => processesOf(run, isEnvoy).length === 1, 'a single Envoy', 15_000);
    const [envoy] = processesOf(run, isEnvoy);
    const gap = await killUnderLoad('envoy', envoy!, load(`${gateway}/echo/things/x`, { timeoutMs: 8000 }));
    expect(gap.failed).toBeGreaterThan(0);
    expect(processesOf(run, (argv) => isCli('engine')(argv) || isCli('service')(argv)).sort()).toEqual(
      others.sort(),
    );
    // The same gateway URL serves: the restarted Envoy was configured with the ports the first one got.
    expect((await fetch(`${gateway}/.well-known/oauth-authorization-server`)).status).toBe(200);
  }, 60_000);

  it('restarts an engine killed under load while the other engine and the service keep serving', async () => {
    const [engine] = processesOf(run, isCli('engine'));
    const family = engineName(engine!);
    const service = load(`${gateway}/.well-known/oauth-authorization-server`, { clients: 1 });
    const stream = load(`${gateway}/echo/things/y`, { timeoutMs: 8000 });
    const gap = await killUnderLoad(family, engine!, stream);
    await service.stop();
    // The other engine answered while this one was away: Envoy's health check took the dead one out within its
    // one-second interval (only the streams in flight on it and the first ones after it failed).
    expect(gap.servedMeanwhile).toBeGreaterThan(0);
    expect(gap.gapMs).toBeLessThan(3000);
    expect(service.failures).toEqual([]);
    expect(service.results.filter((result) => result.status !== 200)).toEqual([]);
  }, 60_000);

  it('restarts the service killed under load: OAuth and MCP come back, the APIs never stop', async () => {
    const [service] = processesOf(run, isCli('service'));
    const apis = load(`${gateway}/echo/things/z`, { clients: 1 });
    const gap = await killUnderLoad(
      'service',
      service!,
      load(`${gateway}/.well-known/oauth-authorization-server`, { timeoutMs: 8000 }),
    );
    await apis.stop();
    expect(gap.failed).toBeGreaterThan(0);
    expect(apis.failures).toEqual([]);
    expect(apis.results.filter((result) => result.status !== 200)).toEqual([]);
    // The MCP endpoint is the service's too: it answers again (401 without a token, from the service itself).
    const mcp = await fetch(`${gateway}/v1/mcp`, { method: 'POST' });
    expect(mcp.status).toBe(401);
  }, 60_000);

  it('counts each restart, by process, at the root of the management API', async () => {
    const management = printedUrl(run.output(), 'management');
    const basic = `Basic ${Buffer.from(`${ADMIN.name}:${ADMIN.password}`).toString('base64')}`;
    const index = (await (await fetch(`${management}/`, { headers: { authorization: basic } })).json()) as {
      restarts: Record<string, number>;
    };
    const engines = Object.entries(index.restarts).filter(([name]) => name.startsWith('engine-'));
    expect(engines.map(([, count]) => count)).toEqual([1]);
    expect(index.restarts).toMatchObject({ envoy: 1, service: 1 });
  });

  it('restarts an engine whose port was taken meanwhile on another port, and Envoy follows', async () => {
    const [engine] = processesOf(run, isCli('engine'));
    const name = engineName(engine!);
    const [port] = listeningPortsOf(engine!);
    const before = run.output().length;
    process.kill(engine!, 'SIGKILL');
    // Something else takes the port before up restarts the engine (its 100 ms backoff is the window).
    const squatter = createServer((socket) => socket.destroy());
    await until(
      () =>
        new Promise<boolean>((resolve) => {
          squatter.once('error', () => resolve(false));
          squatter.listen(port, '127.0.0.1', () => resolve(true));
        }),
      'the port of the dead engine',
      2000,
    );
    try {
      await until(
        () => saidBy(run.output(), 'up', `${name} did not start on port ${port} again`, before),
        'the refused restart',
        20_000,
      );
      await until(
        () => /moved to port \d+; Envoy follows/.test(run.output().slice(before)),
        'the move',
        30_000,
      );
      const moved = Number(/engine-\d moved to port (\d+)/.exec(run.output().slice(before))![1]);
      expect(moved).not.toBe(port);
      // The moved engine serves again: Envoy's new epoch sends it its share.
      const servedBy = (engine: string) =>
        run
          .output()
          .slice(before)
          .split('\n')
          .some((line) => line.startsWith(`[${engine}] `) && line.includes(' api=echo'));
      await until(
        async () => {
          await (await fetch(`${gateway}/echo/things/moved`)).arrayBuffer();
          return servedBy(name);
        },
        `requests through ${name} on its new port`,
        15_000,
      );
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  }, 90_000);

  /** The name `up` gave an engine process: the one whose line reports the port the process listens on. */
  function engineName(pid: number): string {
    const ports = listeningPortsOf(pid);
    for (const match of run
      .output()
      .matchAll(/^\[(engine-\d)\] \S+ INFO +engine listening on [\d.]+:(\d+)$/gm))
      if (ports.includes(Number(match[2]))) return match[1]!;
    throw new Error(`no engine of up listens on ${ports.join(', ')}`);
  }
});
