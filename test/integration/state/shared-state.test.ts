import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';
import { type RunningRedis, startRedis } from '../../processes/redis.js';
import { until } from '../../processes/wait.js';
import { type SharedStateStack, startSharedStateStack } from './harness.js';

/**
 * Two engine processes behind one Envoy, sharing one real Redis: limits, quotas and caches hold across both as on
 * one, and a Redis that stops or stalls gives the configured failure behaviour without holding any request.
 */
describe('shared state through Redis, two engine processes', () => {
  let redis: RunningRedis;
  let backend: EchoBackend;
  let stack: SharedStateStack;
  let slow: Server;

  beforeAll(async () => {
    redis = await startRedis();
    backend = await startEchoBackend();
    // Answers after 400 ms, so concurrent requests overlap while the backend works.
    slow = createServer((request, response) => {
      // /status/<code> answers that code at once (for increment-condition); anything else slowly.
      const status = /^\/status\/(\d{3})/.exec(request.url ?? '');
      if (status) {
        // With a declared length: bandwidth is counted from Content-Length (bodies are not buffered for it).
        response.writeHead(Number(status[1]), { 'content-type': 'text/plain', 'content-length': '600' });
        response.end('x'.repeat(600));
        return;
      }
      setTimeout(() => response.end('slow'), 400);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    const client =
      '@(context.Request.Headers.GetValueOrDefault(&quot;X-Client&quot;, &quot;anonymous&quot;))';
    stack = await startSharedStateStack(
      `
state:
  redis: { url: "${redis.url}", keyPrefix: "it:", commandTimeoutMs: 200, connectTimeoutMs: 300 }
  onRedisFailure: { rateLimit: open, quota: closed, concurrency: open }
  loggers:
    audit: { stream: gateway-audit, maxLength: 1000 }
apis:
${apiYaml('limited', backend.url, [['get', 'GET', '/items', 'limited.xml']])}
${apiYaml('quota', backend.url, [['get', 'GET', '/items', 'quota.xml']])}
${apiYaml('cached', backend.url, [['get', 'GET', '/items', 'cached.xml']])}
${apiYaml('logged', backend.url, [['get', 'GET', '/items/{id}', 'logged.xml']])}
${apiYaml('narrow', slowUrl, [['get', 'GET', '/work', 'narrow.xml']])}
${apiYaml('conditional', slowUrl, [['get', 'GET', '/status/{code}', 'conditional.xml']])}
${apiYaml('bandwidth', slowUrl, [['get', 'GET', '/status/{code}', 'bandwidth.xml']])}
${apiYaml('values', backend.url, [
  ['store', 'GET', '/store', 'store.xml'],
  ['read', 'GET', '/read', 'read.xml'],
])}
`,
      {
        'limited.xml': policy({
          inbound: `<rate-limit-by-key calls="10" renewal-period="60" counter-key="${client}"
              remaining-calls-header-name="X-Remaining" total-calls-header-name="X-Total" />`,
        }),
        'quota.xml': policy({
          inbound: `<quota-by-key calls="3" renewal-period="300" counter-key="${client}"
              first-period-start="2000-01-01T00:00:00Z" />`,
        }),
        'cached.xml': policy({
          inbound:
            '<cache-lookup vary-by-developer="false" vary-by-developer-groups="false" caching-type="external" />',
          outbound: '<cache-store duration="60" />',
        }),
        'narrow.xml': policy(
          {
            backend:
              '<limit-concurrency key="slow-backend" max-count="2"><forward-request /></limit-concurrency>',
          },
          ['backend'],
        ),
        'conditional.xml': policy({
          inbound: `<rate-limit-by-key calls="2" renewal-period="60" counter-key="successes"
              increment-condition="@(context.Response.StatusCode == 200)" remaining-calls-header-name="X-Remaining" />`,
        }),
        'bandwidth.xml': policy({
          inbound: '<quota-by-key bandwidth="1" renewal-period="300" counter-key="bytes" />',
        }),
        'logged.xml': policy({
          inbound: `<log-to-eventhub logger-id="audit" partition-key="${client}">@(context.Request.Method + " " + context.Request.MatchedParameters["id"])</log-to-eventhub>`,
        }),
        'store.xml': policy({
          inbound: `<cache-store-value key="shared" value="@(context.Request.Url.Query.GetValueOrDefault(&quot;v&quot;, &quot;&quot;))" duration="60" />
            <return-response><set-status code="204" reason="No Content" /></return-response>`,
        }),
        'read.xml': policy({
          inbound: `<cache-lookup-value key="shared" variable-name="v" default-value="miss" />
            <return-response><set-body>@((string)context.Variables["v"])</set-body></return-response>`,
        }),
      },
    );
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await backend?.close();
    slow?.closeAllConnections();
    await new Promise((resolve) => slow?.close(resolve));
    await redis?.close();
  });

  const get = (path: string, clientId?: string) =>
    fetch(`${stack.url}${path}`, clientId === undefined ? {} : { headers: { 'X-Client': clientId } });

  // What the engines wrote to Redis (keys carry the configured `it:` prefix), to wait for writes that go out
  // with a response rather than before it.
  const keysLike = (pattern: string) => redis.cli('KEYS', pattern).trim().split('\n').filter(Boolean);
  /** limit-concurrency slots held: a sorted set of lease tokens per key. */
  const leasesHeld = () =>
    keysLike('it:conc:*slow-backend*').reduce(
      (held, key) => held + Number(redis.cli('ZCARD', key).trim()),
      0,
    );
  /** Calls a rate-limit window holds: a hash of `count:time` buckets per key. */
  const callsCounted = (pattern: string) =>
    keysLike(pattern)
      .flatMap((key) => redis.cli('HVALS', key).trim().split('\n').filter(Boolean))
      .reduce((calls, bucket) => calls + Number(bucket.split(':')[0]), 0);
  /** Bytes a quota holds: a hash {w, c, b} per key. */
  const bytesCounted = (pattern: string) =>
    keysLike(pattern).reduce((bytes, key) => bytes + Number(redis.cli('HGET', key, 'b').trim() || 0), 0);

  it('a limit of 10 per minute admits exactly 10 of 20 concurrent calls spread over both engines', async () => {
    const before = stack.engines.map((engine) => engine.requests());
    const responses = await Promise.all(Array.from({ length: 20 }, () => get('/limited/items', 'burst')));
    const admitted = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect(admitted).toHaveLength(10);
    expect(refused).toHaveLength(10);
    // Each admitted call saw its own place in the shared count.
    expect(admitted.map((r) => Number(r.headers.get('x-remaining'))).sort((a, b) => a - b)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
    expect(new Set(admitted.map((r) => r.headers.get('x-total')))).toEqual(new Set(['10']));
    for (const response of refused) {
      const retryAfter = Number(response.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(59);
      expect(retryAfter).toBeLessThanOrEqual(61);
      expect(await response.json()).toEqual({
        statusCode: 429,
        message: `Rate limit is exceeded. Try again in ${retryAfter} seconds.`,
      });
    }
    // Both processes took part (Envoy spreads streams over the two engine endpoints).
    // Each engine writes its access-log line just after answering: give the last lines a moment to arrive.
    const served = () => stack.engines.map((engine, i) => engine.requests() - before[i]!);
    await until(() => served()[0]! + served()[1]! >= 20, 'the access-log line of every request', {
      timeoutMs: 1000,
      everyMs: 20,
    });
    const [first, second] = served();
    expect(first! + second!).toBe(20);
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(0);
    // Another key has its own count.
    expect((await get('/limited/items', 'other')).status).toBe(200);
  });

  it('a quota of 3 calls per fixed 5-minute window refuses the 4th with 403 and the time to the window end', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await get('/quota/items', 'quota-client')).status);
    expect(statuses).toEqual([200, 200, 200]);
    const refused = await get('/quota/items', 'quota-client');
    expect(refused.status).toBe(403);
    // Windows start at 2000-01-01T00:00:00Z, so they end on every 5-minute boundary of the clock.
    const expected = Math.ceil((300_000 - (Date.now() % 300_000)) / 1000);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Math.abs(retryAfter - expected)).toBeLessThanOrEqual(2);
    const body = (await refused.json()) as { statusCode: number; message: string };
    expect(body.statusCode).toBe(403);
    expect(body.message).toMatch(
      /^Out of call volume quota\. Quota will be replenished in 00:0[0-5]:\d\d\.$/,
    );
  });

  it('a response stored through one engine is a hit through the other', async () => {
    const before = backend.received.length;
    const bodies = [];
    for (let i = 0; i < 12; i++) bodies.push(await (await get('/cached/items?page=1')).text());
    // One miss reached the backend; every later call, whichever engine ran it, was answered from Redis.
    expect(backend.received.length - before).toBe(1);
    expect(new Set(bodies).size).toBe(1);
    expect(redis.cli('EVAL', "return #redis.call('KEYS', 'it:resp:*')", '0').trim()).toBe('1');
  });

  it('a value stored through one engine is read through both', async () => {
    expect((await get('/values/store?v=shared-value')).status).toBe(204);
    const reads = [];
    for (let i = 0; i < 12; i++) reads.push(await (await get('/values/read')).text());
    expect(new Set(reads)).toEqual(new Set(['shared-value']));
    expect(redis.cli('PTTL', 'it:val:shared').trim()).toMatch(/^\d+$/);
  });

  it('limit-concurrency: 2 slots shared by both engines are held until the backend answered', async () => {
    const statuses = (await Promise.all(Array.from({ length: 8 }, () => get('/narrow/work')))).map(
      (r) => r.status,
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(6);
    // Released at the end of each request (sent to Redis as the response goes out, not awaited by it): after a
    // moment the next pair is admitted.
    await until(() => leasesHeld() === 0, 'both slots to be released', { timeoutMs: 2000, everyMs: 20 });
    const next = await Promise.all([get('/narrow/work'), get('/narrow/work')]);
    expect(next.map((r) => r.status)).toEqual([200, 200]);
  });

  it('increment-condition on the response: failed calls through either engine are not counted', async () => {
    for (let i = 0; i < 5; i++) expect((await get('/conditional/status/500')).status).toBe(500);
    expect((await get('/conditional/status/200')).headers.get('x-remaining')).toBe('1');
    expect((await get('/conditional/status/200')).status).toBe(200);
    // The count is taken as each response goes out: wait until the last one has reached Redis.
    await until(() => callsCounted('it:rl:*successes*') === 2, 'both successes to be counted', {
      timeoutMs: 2000,
      everyMs: 20,
    });
    const refused = await get('/conditional/status/200');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
  });

  it('a bandwidth quota counts the bytes of the responses (1 KB: two 600-byte answers use it up)', async () => {
    // The bytes are counted as each response goes out: wait for each count to reach Redis.
    const counted = (more: number) =>
      until(() => bytesCounted('it:quota:*bytes*') > more, 'the answer to be counted', {
        timeoutMs: 2000,
        everyMs: 20,
      });
    expect((await get('/bandwidth/status/200')).status).toBe(200);
    await counted(0);
    const first = bytesCounted('it:quota:*bytes*');
    expect((await get('/bandwidth/status/200')).status).toBe(200);
    await counted(first);
    const refused = await get('/bandwidth/status/200');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /^Out of bandwidth quota\. Quota will be replenished in 00:0[0-5]:\d\d\.$/,
    );
  });

  it('log-to-eventhub entries from both engines are readable from the Redis stream', async () => {
    for (let i = 1; i <= 6; i++)
      expect((await get(`/logged/items/${i}`, `writer-${i % 2}`)).status).toBe(200);
    await until(() => Number(redis.cli('XLEN', 'it:gateway-audit').trim()) >= 6, 'six stream entries', 5000);
    // redis-cli prints each entry as its id and then field, value lines.
    const lines = redis.cli('XRANGE', 'it:gateway-audit', '-', '+').trim().split('\n');
    const messages = lines.filter((_, i) => lines[i - 1] === 'message');
    expect(messages.sort()).toEqual(['GET 1', 'GET 2', 'GET 3', 'GET 4', 'GET 5', 'GET 6']);
    const keys = lines.filter((_, i) => lines[i - 1] === 'partitionKey');
    expect(keys.sort()).toEqual(['writer-0', 'writer-0', 'writer-0', 'writer-1', 'writer-1', 'writer-1']);
  });

  it('Redis stopped and stalled: rate limits fail open, quotas fail closed, no request waits; then it recovers', async () => {
    await redis.stop();
    try {
      const started = Date.now();
      const limited = await Promise.all(Array.from({ length: 4 }, () => get('/limited/items', 'outage')));
      const quota = await Promise.all(Array.from({ length: 4 }, () => get('/quota/items', 'outage')));
      const read = await (await get('/values/read')).text();
      expect(limited.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(quota.map((r) => r.status)).toEqual([503, 503, 503, 503]);
      expect(quota[0]!.headers.get('retry-after')).toBe('1');
      expect(await quota[0]!.json()).toEqual({ statusCode: 503, message: 'Service unavailable' });
      // A cache that cannot be reached is a miss.
      expect(read).toBe('miss');
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await redis.start();
    }

    // ioredis reconnects on its own (at most a second apart): limits are enforced again.
    const started = Date.now();
    const reconnect = { timeoutMs: 10_000, everyMs: 200 };
    await until(
      async () => (await get('/quota/items', 'after-outage')).status === 200,
      'a quota again',
      reconnect,
    );
    // Both engines are back on the shared count (the first may still be reconnecting: give it the same time).
    let quotaStatuses: number[] = [];
    await until(
      async () => {
        quotaStatuses = [];
        for (let i = 0; i < 6; i++)
          quotaStatuses.push((await get('/quota/items', `recovered-${started}`)).status);
        return !quotaStatuses.includes(503);
      },
      'both engines to reach Redis again',
      { timeoutMs: Math.max(0, 10_000 - (Date.now() - started)), everyMs: 0 },
    );
    expect(quotaStatuses).toEqual([200, 200, 200, 403, 403, 403]);

    // A stalled Redis (accepts, never answers) costs each request at most the command timeout.
    redis.pause();
    try {
      const started = Date.now();
      const responses = await Promise.all([get('/limited/items', 'stalled'), get('/quota/items', 'stalled')]);
      expect(responses.map((r) => r.status)).toEqual([200, 503]);
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      redis.resume();
    }
    const logs = stack.engines.map((engine) => engine.output()).join('\n');
    expect(logs).toContain('shared state unavailable: quota');
    expect(logs).toContain('redis connection lost');
  }, 30_000);
});
