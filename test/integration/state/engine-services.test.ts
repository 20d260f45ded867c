import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ElementCounters } from '../../../src/engine/element-counters.js';
import { FailureLog, GuardedLimits } from '../../../src/engine/guarded-limits.js';
import { createEngineServices, type EngineServices } from '../../../src/engine/services.js';
import { responseCodec, valueCodec } from '../../../src/engine/value-codecs.js';
import { CsDateTime, CsDouble, CsGuid, JObject, parseJson, toDotNetString } from '../../../src/expr/index.js';
import { compilePolicyDocument, readPolicyDocument } from '../../../src/policy/document.js';
import { buildPipeline } from '../../../src/policy/pipeline.js';
import { PipelineRun } from '../../../src/policy/runner.js';
import { PolicyError } from '../../../src/policy/runtime.js';
import type { Logger } from '../../../src/policy/services.js';
import { type LimitStore, StateUnavailableError } from '../../../src/state/limits.js';
import { type RunningRedis, startRedis } from '../../processes/redis.js';
import { until } from '../../processes/wait.js';

const quiet: Logger & { lines: string[] } = {
  lines: [],
  debug: () => {},
  info: (message) => quiet.lines.push(`info ${message}`),
  warn: (message) => quiet.lines.push(`warn ${message}`),
  error: (message) => quiet.lines.push(`error ${message}`),
};

/** Runs `inbound` statements (then a return-response) through the real runner on the given services. */
async function inbound(services: EngineServices, statements: string) {
  const xml = `<policies><inbound>${statements}</inbound><backend /><outbound /><on-error /></policies>`;
  const document = compilePolicyDocument(
    readPolicyDocument(xml, { file: 'op.xml', namedValues: new Map() }),
    {
      scope: 'operation',
    },
  );
  const run = new PipelineRun(
    buildPipeline({ operation: document }),
    { method: 'GET', url: 'https://gw.example.com/x', headers: [], clientIp: '203.0.113.9' },
    services,
  );
  const outcome = await run.onRequest();
  return { run, outcome };
}

describe('value codec (external cache)', () => {
  it('round-trips the runtime values policies store', () => {
    const values: unknown[] = [
      'text',
      true,
      null,
      42,
      12345678901234567890n,
      new CsDouble(2.5),
      new CsGuid('5f0c2a8e-1c1e-4f4e-9d6b-3c3b0b8f7a11'),
      CsDateTime.fromDate(new Date(Date.UTC(2025, 4, 6, 7, 8, 9))),
    ];
    for (const value of values) {
      const decoded = valueCodec.decode(valueCodec.encode({ value })!).value;
      expect(decoded).toEqual(value);
    }
    const json = parseJson('{"user":{"id":7,"roles":["a","b"]}}');
    const back = valueCodec.decode(valueCodec.encode({ value: json })!).value;
    expect(back).toBeInstanceOf(JObject);
    expect(toDotNetString(back)).toBe(toDotNetString(json));
  });

  it('refuses values that only exist inside one process', () => {
    expect(valueCodec.encode({ value: new Map() })).toBeUndefined();
    expect(valueCodec.encode({ value: { some: 'object' } })).toBeUndefined();
  });

  it('keeps a cached response byte for byte', () => {
    const body = Buffer.from([0, 10, 13, 255, 10]);
    const cached = { status: 203, reason: 'Non-Authoritative', headers: [['X-A', '1\n2']] as const, body };
    const decoded = responseCodec.decode(responseCodec.encode(cached)!);
    expect(decoded).toEqual({ ...cached, headers: [['X-A', '1\n2']] });
  });
});

describe('GuardedLimits: fail open or closed per policy kind', () => {
  const broken: LimitStore = {
    slidingWindow: () => Promise.reject(new StateUnavailableError('down')),
    quota: () => Promise.reject(new StateUnavailableError('down')),
    acquire: () => Promise.reject(new StateUnavailableError('down')),
    release: () => Promise.reject(new StateUnavailableError('down')),
  };

  it('open admits, closed refuses with 503 StateUnavailable; both are counted', async () => {
    const counters = new ElementCounters();
    const limits = new GuardedLimits(
      broken,
      { rateLimit: 'open', quota: 'closed', concurrency: 'open' },
      counters,
      new FailureLog(quiet),
    );
    const sliding = await limits.slidingWindow({
      key: 'k',
      limit: 5,
      periodSeconds: 60,
      amount: 1,
      mode: 'consume',
    });
    expect(sliding).toEqual({ allowed: true, used: 0, remaining: 5, retryAfterSeconds: 0 });
    expect(counters.get('rate-limit', 'failed', 'StateUnavailable')).toBe(1);

    const refusal = await limits
      .quota({
        key: 'q',
        periodSeconds: 300,
        originMs: 0,
        callLimit: 1,
        kilobyteLimit: undefined,
        calls: 1,
        bytes: 0,
        mode: 'consume',
      })
      .catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(PolicyError);
    expect(refusal).toMatchObject({
      reason: 'StateUnavailable',
      status: 503,
      clientMessage: 'Service unavailable',
    });
    expect((refusal as PolicyError).headers).toEqual([['Retry-After', '1']]);
    expect(counters.get('quota', 'failed', 'StateUnavailable')).toBe(1);

    // Counting after the response (increment-condition, bandwidth) never refuses, even when closed.
    const late = await limits.quota({
      key: 'q',
      periodSeconds: 300,
      originMs: 0,
      callLimit: 1,
      kilobyteLimit: undefined,
      calls: 0,
      bytes: 10,
      mode: 'add',
    });
    expect(late.allowed).toBe(true);

    // Fail-open concurrency hands out a lease whose release does nothing.
    const lease = await limits.acquire('c', 1, 10);
    expect(lease).toEqual({ key: 'c', token: '' });
    await limits.release(lease!);
    expect(counters.get('limit-concurrency', 'failed', 'StateUnavailable')).toBe(1);
  });

  it('other errors are not swallowed', async () => {
    const limits = new GuardedLimits(
      { ...broken, slidingWindow: () => Promise.reject(new RangeError('bug')) },
      { rateLimit: 'open', quota: 'open', concurrency: 'open' },
      new ElementCounters(),
      new FailureLog(quiet),
    );
    await expect(
      limits.slidingWindow({ key: 'k', limit: 1, periodSeconds: 1, amount: 1, mode: 'consume' }),
    ).rejects.toBeInstanceOf(RangeError);
  });
});

describe('engine services without Redis', () => {
  it('every caching-type uses the in-process cache, and limits are counted in-process', async () => {
    const services = createEngineServices({ backends: new Map(), logger: quiet });
    await inbound(services, '<cache-store-value key="k" value="v1" duration="60" caching-type="external" />');
    const { run } = await inbound(
      services,
      '<cache-lookup-value key="k" variable-name="a" caching-type="internal" /><cache-lookup-value key="k" variable-name="b" />',
    );
    expect(run.context.variables.get('a')).toBe('v1');
    expect(run.context.variables.get('b')).toBe('v1');
    expect(services.redis).toBeUndefined();
    const results = [];
    for (let i = 0; i < 3; i++)
      results.push(
        (
          await services.limits.slidingWindow({
            key: 'x',
            limit: 2,
            periodSeconds: 60,
            amount: 1,
            mode: 'consume',
          })
        ).allowed,
      );
    expect(results).toEqual([true, true, false]);
    await expect(services.eventLog.append('audit', 'm', {})).rejects.toThrow(
      'no logger "audit" in state.loggers (configured: none)',
    );
    await services.close();
  });
});

describe('engine services with Redis', () => {
  let redis: RunningRedis;
  let services: EngineServices;

  beforeAll(async () => {
    redis = await startRedis();
    services = createEngineServices({
      backends: new Map(),
      logger: quiet,
      state: {
        redis: { url: redis.url, keyPrefix: 'u:', commandTimeoutMs: 300, connectTimeoutMs: 500 },
        loggers: { audit: { stream: 'audit-stream', maxLength: 20 } },
        eventBuffer: 50,
      },
    });
    await services.redis!.ready(5000);
  });

  afterAll(async () => {
    await services?.close();
    await redis?.close();
  });

  it('caching-type internal stays in the process; external and prefer-external go to Redis', async () => {
    await inbound(
      services,
      `<cache-store-value key="only-here" value="local" duration="60" caching-type="internal" />
       <cache-store-value key="shared" value="@(new JObject(new JProperty(&quot;n&quot;, 5)))" duration="60" caching-type="external" />
       <cache-store-value key="preferred" value="p" duration="60" />`,
    );
    expect(redis.cli('EXISTS', 'u:val:only-here').trim()).toBe('0');
    expect(JSON.parse(redis.cli('GET', 'u:val:shared'))).toMatchObject({ t: 'j' });
    expect(redis.cli('GET', 'u:val:preferred').trim()).toBe('{"t":"s","v":"p"}');
    const { run } = await inbound(
      services,
      `<cache-lookup-value key="only-here" variable-name="local" caching-type="internal" />
       <cache-lookup-value key="only-here" variable-name="missing" default-value="none" caching-type="external" />
       <cache-lookup-value key="shared" variable-name="shared" caching-type="prefer-external" />
       <set-variable name="n" value="@(((JObject)context.Variables[&quot;shared&quot;])[&quot;n&quot;].ToString())" />`,
    );
    expect(run.context.variables.get('local')).toBe('local');
    expect(run.context.variables.get('missing')).toBe('none');
    expect(run.context.variables.get('n')).toBe('5');
    await inbound(services, '<cache-remove-value key="shared" caching-type="external" />');
    expect(redis.cli('EXISTS', 'u:val:shared').trim()).toBe('0');
  });

  it('log events land in the stream with their fields, trimmed to about maxLength', async () => {
    await services.eventLog.append('audit', 'first', { key: 'user-1' });
    await services.eventLog.append('audit', 'second', { id: '3' });
    await services.eventStream!.flush();
    const entries = redis.cli('XRANGE', 'u:audit-stream', '-', '+').trim().split('\n');
    expect(entries).toEqual(
      expect.arrayContaining(['loggerId', 'audit', 'message', 'first', 'partitionKey', 'user-1', 'second']),
    );
    expect(entries).toContain('partitionId');
    // 400 more, in rounds that fit the 50-event buffer.
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 40; i++) expect(services.events.send('audit', `bulk ${round}.${i}`)).toBe('queued');
      await services.eventStream!.flush();
    }
    const length = Number(redis.cli('XLEN', 'u:audit-stream').trim());
    // MAXLEN ~ trims whole radix-tree nodes (100 entries by default): about, never far above, the bound.
    expect(length).toBeGreaterThanOrEqual(20);
    expect(length).toBeLessThan(200);
    expect(services.eventStream!.sent).toBe(402);
  });

  it('while Redis is down, events wait in the bounded buffer, the rest are dropped and counted; then delivered', async () => {
    await redis.stop();
    try {
      await until(() => !services.redis!.available, 'the connection to notice Redis is gone', {
        everyMs: 10,
      });
      const droppedBefore = services.counters.get('log-to-eventhub', 'failed', 'EventDropped');
      const outcomes = Array.from({ length: 60 }, (_, i) => services.events.send('audit', `during ${i}`));
      expect(outcomes.filter((o) => o === 'queued')).toHaveLength(50);
      expect(outcomes.filter((o) => o === 'dropped')).toHaveLength(10);
      expect(services.counters.get('log-to-eventhub', 'failed', 'EventDropped') - droppedBefore).toBe(10);
      // The caches answer at once with a miss, the limits as configured (open by default).
      const started = Date.now();
      const { run } = await inbound(
        services,
        '<cache-lookup-value key="preferred" variable-name="v" default-value="miss" />',
      );
      expect(run.context.variables.get('v')).toBe('miss');
      expect(services.counters.get('cache', 'failed', 'StateUnavailable')).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(300);
    } finally {
      await redis.start();
    }
    await until(() => services.eventStream!.pending === 0, 'the buffered events to be delivered', 10_000);
    expect(Number(redis.cli('XLEN', 'u:audit-stream').trim())).toBe(50);
    expect(quiet.lines).toContain('warn redis connection lost');
  });
});

describe('in-process value cache', () => {
  it('keeps its own copy of JSON values and sizes values it cannot encode', async () => {
    const services = createEngineServices({ backends: new Map(), logger: quiet });
    const { run } = await inbound(
      services,
      `<set-variable name="doc" value="@(new JObject(new JProperty(&quot;n&quot;, 1)))" />
       <cache-store-value key="doc" value="@((JObject)context.Variables[&quot;doc&quot;])" duration="60" />
       <cache-store-value key="long" value="@(1234567890123456789L)" duration="60" />
       <set-variable name="changed" value="@{ var d = (JObject)context.Variables[&quot;doc&quot;]; d[&quot;n&quot;] = 2; return d.ToString(); }" />`,
    );
    expect(run.context.lastError).toBeNull();
    const { run: reader } = await inbound(
      services,
      `<cache-lookup-value key="doc" variable-name="doc" />
       <cache-lookup-value key="long" variable-name="long" />
       <set-variable name="n" value="@(((JObject)context.Variables[&quot;doc&quot;])[&quot;n&quot;].ToString())" />`,
    );
    expect(reader.context.variables.get('n')).toBe('1');
    expect(reader.context.variables.get('long')).toBe(1234567890123456789n);
    await services.close();
  });
});
