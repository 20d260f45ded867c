import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it, type TestContext } from 'vitest';
import { parse, stringify } from 'yaml';
import { freePort } from '../../src/config/plan.js';
import { runCli } from '../processes/cli.js';
import { descendantsOf, isAlive } from '../processes/process-tree.js';
import { startUp, type UpRun } from '../processes/up.js';
import { until } from '../processes/wait.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const exampleDir = path.join(root, 'examples', 'courses');

/**
 * `up` for the test `context` runs: a run the test left behind (it failed half-way) is stopped as a user would when
 * the test ends, then anything left is killed.
 */
function up(
  context: TestContext,
  configFile: string,
  env: NodeJS.ProcessEnv = process.env,
  logFormat: 'pretty' | 'json' = 'pretty',
): UpRun {
  const run = startUp(configFile, env, [], logFormat);
  context.onTestFinished(async () => {
    await run.stop(15_000);
  });
  return run;
}

/**
 * The bundled example's configuration, moved to free ports (gateway, admin, management, the sample backend) so the suite never
 * collides with a running gateway; `extraProcesses` is appended to its `processes`.
 */
async function exampleConfig(extraProcesses: Record<string, unknown>[] = []): Promise<{
  file: string;
  gatewayPort: number;
  backendPort: number;
  metricsPort: number;
  serviceMetricsPort: number;
}> {
  const [gatewayPort, adminPort, backendPort, metricsPort, managementPort, serviceMetricsPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const config = parse(await readFile(path.join(exampleDir, 'gateway.yaml'), 'utf8'));
  const backendUrl = `http://127.0.0.1:${backendPort}`;
  config.gateway = { http: { host: '127.0.0.1', port: gatewayPort } };
  config.admin = { host: '127.0.0.1', port: adminPort };
  if (config.management) config.management.listen = { host: '127.0.0.1', port: managementPort };
  config.engine = { ...config.engine, metricsPort };
  config.service = { ...config.service, metricsPort: serviceMetricsPort };
  for (const api of config.apis) {
    api.serviceUrl = backendUrl;
    api.policy &&= path.join(exampleDir, api.policy);
    for (const operation of api.operations) operation.policy &&= path.join(exampleDir, operation.policy);
  }
  for (const backend of config.backends ?? []) backend.url = backendUrl;
  for (const companion of config.processes) {
    companion.cwd = exampleDir;
    companion.env = { ...companion.env, PORT: String(backendPort) };
    companion.readyUrl = `${backendUrl}/healthz`;
  }
  config.processes.push(...extraProcesses);
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-e2e-'));
  const file = path.join(directory, 'gateway.yaml');
  await writeFile(file, stringify(config));
  return { file, gatewayPort, backendPort, metricsPort, serviceMetricsPort };
}

// Each test runs an `up` of its own, on its own ports: they run side by side, so one's start overlaps another's
// waits (the backoff between restarts).
describe.concurrent('portcullis up', { timeout: 60_000 }, () => {
  it('brings the example up, serves the Course API through Envoy and the engine, and stops cleanly on SIGINT', async (context) => {
    const { expect } = context;
    const { file, gatewayPort, metricsPort, serviceMetricsPort } = await exampleConfig();
    const run = up(context, file);
    await run.waitFor('Press Ctrl-C to stop.');
    expect(run.output()).toContain(`http://127.0.0.1:${gatewayPort}/courses/`);

    const response = await fetch(`http://127.0.0.1:${gatewayPort}/courses/api/Course`);
    expect(response.status).toBe(200);
    const courses = (await response.json()) as { id: number; title: string }[];
    expect(courses.map((course) => course.title)).toEqual(['Networks', 'Compilers', 'Distributed Systems']);
    expect(response.headers.get('x-backend-saw-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    // The spec's sample inbound policy runs: courseID selects one course.
    const one = await fetch(`http://127.0.0.1:${gatewayPort}/courses/api/Course?courseID=2`);
    expect(one.headers.get('x-backend-saw-path')).toBe('/api/Course/2');
    expect(await one.json()).toEqual({ id: 2, title: 'Compilers', credits: 6 });

    // The engine's Prometheus metrics count what it did.
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toContain(
      'portcullis_engine_requests_total{api="courses",operation="list-courses",outcome="forwarded",status="200",reason=""} 2',
    );
    expect(metrics).toMatch(
      /^portcullis_engine_request_duration_seconds_count\{api="courses",operation="list-courses"\} 2$/m,
    );
    expect(metrics).toMatch(/^process_cpu_user_seconds_total \d/m);

    // The service's own metrics, on their own port: the authorization server's routes by name, token requests by
    // grant type. The gateway listener does not serve them.
    const gateway = `http://127.0.0.1:${gatewayPort}`;
    const metadata = (await (await fetch(`${gateway}/.well-known/oauth-authorization-server`)).json()) as {
      token_endpoint: string;
    };
    const tokenPath = new URL(metadata.token_endpoint).pathname;
    const refused = await fetch(`${gateway}${tokenPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&refresh_token=nope&client_id=nobody',
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    const service = await (await fetch(`http://127.0.0.1:${serviceMetricsPort}/metrics`)).text();
    expect(service).toMatch(
      /^portcullis_service_requests_total\{route="metadata \/\.well-known\/oauth-authorization-server",method="GET",status="200"\} 1$/m,
    );
    expect(service).toMatch(
      new RegExp(
        `^portcullis_oauth_token_requests_total\\{grant_type="refresh_token",outcome="refused",status="${refused.status}"\\} 1$`,
        'm',
      ),
    );
    expect(service).toContain('portcullis_mcp_streams_open 0');
    expect((await fetch(`${gateway}/metrics`)).status).not.toBe(200);

    const children = descendantsOf(run.child.pid!);
    expect(children.length).toBeGreaterThanOrEqual(4);
    // Every process's lines under its name: the companion's as it wrote them, the others' log lines as time, level
    // and message (Envoy, at its configured level `warning`, has said nothing).
    expect(run.output()).toMatch(/^\[courses\] course backend listening/m);
    for (const name of ['engine', 'service'])
      expect(run.output()).toMatch(new RegExp(`^\\[${name}\\] \\d\\d:\\d\\d:\\d\\d [A-Z]+ `, 'm'));

    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(run.output()).toMatch(/^\[up\] \d\d:\d\d:\d\d INFO +stopped\.$/m);
    // Helpers of the children (esbuild's service process under tsx) go with their process groups; give the kernel a
    // moment to finish them.
    await until(() => !children.some(isAlive), 'every child to be gone', {
      timeoutMs: 2000,
      detail: () => `still alive: ${children.filter(isAlive).join(', ')}`,
    });
    await expect(fetch(`http://127.0.0.1:${gatewayPort}/courses/api/Course`)).rejects.toThrow();
  });

  it('`portcullis stats --watch` shows req/s, status classes and p50/p99 by API, ext_proc counters and refusals by reason while traffic runs', {
    timeout: 120_000,
  }, async (context) => {
    const { expect } = context;
    const { file, gatewayPort } = await exampleConfig();
    // One more API whose rate limit refuses all but the first call a minute, for the refusals section.
    const config = parse(await readFile(file, 'utf8'));
    const limitedPolicy = path.join(path.dirname(file), 'limited.xml');
    await writeFile(
      limitedPolicy,
      '<policies><inbound><base /><rate-limit-by-key calls="1" renewal-period="60" counter-key="@(context.Request.IpAddress)" /></inbound><backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error></policies>',
    );
    config.apis.push({
      id: 'limited',
      name: 'Limited',
      urlSuffix: 'limited',
      serviceUrl: config.apis[0].serviceUrl,
      policy: limitedPolicy,
      operations: [{ id: 'limited-list', method: 'GET', urlTemplate: '/api/Course' }],
    });
    await writeFile(file, stringify(config));
    const run = up(context, file);
    await run.waitFor('Press Ctrl-C to stop.');

    const stats = runCli(['stats', '--config', file, '--watch', '1', '--count', '8']);
    let finished = false;
    void stats.then(() => (finished = true));
    // Traffic until the command has shown its views (it stops after 8, about 8 s): bounded in time and count, not by
    // a count alone, which a fast machine sent (cache hits, one at a time) before the last view, a second of no traffic.
    const gateway = `http://127.0.0.1:${gatewayPort}`;
    let limitedStatuses: number[] = [];
    const deadline = Date.now() + 60_000;
    for (let sent = 0; !finished && sent < 100_000 && Date.now() < deadline; sent++) {
      await (await fetch(`${gateway}/courses/api/Course`)).arrayBuffer();
      if (sent % 10 === 0) {
        const limited = await fetch(`${gateway}/limited/api/Course`);
        await limited.arrayBuffer();
        limitedStatuses.push(limited.status);
      }
    }
    const { status, stdout, stderr } = await stats;
    expect(stderr).toBe('');
    expect(status).toBe(0);
    limitedStatuses = [...new Set(limitedStatuses)].sort();
    expect(limitedStatuses, stdout).toEqual([200, 429]);
    const views = stdout.split(/^(?=portcullis stats )/m);
    expect(views).toHaveLength(8);
    const last = views.at(-1)!;
    // API  req/s  cached/s  2xx  3xx  4xx  5xx  cached  p50 ms  p99 ms: traffic flowed in the last second, the
    // engine timed it, and the example's list-courses cache answered most of it (the backend was not called).
    const courses =
      /^courses\s+(\d+\.\d)\s+(\d+\.\d)\s+(\d+)\s+0\s+0\s+0\s+(\d+)\s+(\d+\.\d)\s+(\d+\.\d)$/m.exec(last);
    expect(courses, last).not.toBeNull();
    const [, rate, cachedRate, ok, cached, p50, p99] = courses!.map(Number);
    expect(rate).toBeGreaterThan(0);
    expect(cachedRate).toBeGreaterThan(0);
    expect(ok).toBeGreaterThan(10);
    expect(cached).toBeGreaterThan(0);
    expect(cached).toBeLessThanOrEqual(ok!);
    expect(p99).toBeGreaterThanOrEqual(p50!);
    // Envoy's backend clusters, each named after the API whose traffic it carried (the APIs share one backend
    // origin; the /courses traffic used to show up under api_guarded), with their latency; guarded had none.
    expect(last).toMatch(/^api_courses\s+\d+\.\d\s+[1-9]\d*\s+0\s+\d+\.\d\s+\d+\.\d$/m);
    expect(last).toMatch(/^api_limited\s+\d+\.\d\s+[1-9]\d*\s+0\s/m);
    expect(last).not.toContain('api_guarded');
    expect(last).toMatch(/^limited\s+\d+\.\d\s+0\.0\s+1\s+0\s+[1-9]\d*\s+0\s/m);
    expect(last).toMatch(/^gateway {2}\d+\.\d req\/s {2}p50 \d+\.\d ms {2}p99 \d+\.\d ms/m);
    expect(last).toMatch(
      /^ext_proc {2}streams [1-9]\d* \(\d+\.\d\/s\) {2}failed 0 .* {2}message timeouts 0 /m,
    );
    expect(last).toMatch(/^rate-limit-by-key\s+\S+\s+[1-9]\d*\s+\d+\.\d$/m);

    // The same gateway read with a configuration that names no engine metrics port: what to configure, not zeros.
    delete config.engine.metricsPort;
    const withoutMetrics = path.join(path.dirname(file), 'without-metrics.yaml');
    await writeFile(withoutMetrics, stringify(config));
    const bare = await runCli(['stats', '--config', withoutMetrics]);
    expect(bare.status, bare.stderr).toBe(0);
    expect(bare.stdout).toContain('the configuration sets no engine.metricsPort');
    expect(bare.stdout).not.toMatch(/^courses\s/m);
  });

  it('restarts a child that dies with a growing backoff, and gives up on one that keeps dying, naming it', async (context) => {
    const { expect } = context;
    const { file } = await exampleConfig([
      { name: 'fragile', command: ['node', '-e', 'setTimeout(() => process.exit(3), 300)'] },
    ]);
    const run = up(context, file);
    const exitCode = await run.exited;
    expect(exitCode).toBe(1);
    const output = run.output();
    // Each death is logged and counted, each wait twice the one before.
    for (const [restart, delay] of [
      [1, 100],
      [2, 200],
      [3, 400],
      [4, 800],
      [5, 1600],
    ])
      expect(output).toContain(
        `fragile exited (exit code 3); restarting in ${delay} ms (restart ${restart})`,
      );
    expect(output).toMatch(/fragile keeps dying \(6 times within 60 s, last: exited \(exit code 3\)\)/);
  });

  it("passes the processes' JSON log lines through with --log-format json, each naming its process", async (context) => {
    const { expect } = context;
    const { file, gatewayPort } = await exampleConfig();
    const run = up(context, file, process.env, 'json');
    await run.waitFor('Press Ctrl-C to stop.');
    const requestId = '0c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5';
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await fetch(`http://127.0.0.1:${gatewayPort}/courses/api/Course`, {
      headers: { 'x-request-id': requestId, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const logLines = () =>
      run
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    await until(
      () => logLines().some((line) => line.message === 'request' && line.requestId === requestId),
      'the access line',
      { timeoutMs: 10_000, detail: () => run.output() },
    );
    const access = logLines().find((line) => line.message === 'request' && line.requestId === requestId)!;
    expect(access).toMatchObject({ process: 'engine', level: 'info', traceId, api: 'courses', status: 200 });
    expect(Object.keys(access).slice(0, 3)).toEqual(['process', 'level', 'time']);
    // The companion's plain text, wrapped in the same shape.
    expect(logLines()).toContainEqual(
      expect.objectContaining({
        process: 'courses',
        level: 'info',
        message: expect.stringContaining('listening'),
      }),
    );
  });

  it('explains how to install Envoy when it cannot be found', async (context) => {
    const { expect } = context;
    const { file } = await exampleConfig();
    const run = up(context, file, { ...process.env, ENVOY_BIN: '/nonexistent/envoy' });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain(
      'ENVOY_BIN is set to "/nonexistent/envoy", which is not an executable file.',
    );
  });

  it('refuses a configuration with errors, naming file, line and column', async (context) => {
    const { expect } = context;
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-e2e-'));
    const file = path.join(directory, 'gateway.yaml');
    await writeFile(
      file,
      'apis:\n  - id: x\n    urlSuffix: x\n    serviceUrl: http://127.0.0.1:1\n    colour: red\n',
    );
    const run = up(context, file);
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain(`${file}:5:5: apis[0].colour: unknown key "colour"`);
  });
});
