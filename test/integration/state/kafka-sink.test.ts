import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/config/plan.js';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';
import { type RunningKafka, startKafka } from '../../processes/kafka.js';
import { until } from '../../processes/wait.js';
import { type SharedStateStack, startSharedStateStack } from './harness.js';

const TOPIC = 'apim-events';
/** The topic of the logger that logs in as Event Hubs' Kafka endpoint asks: user $ConnectionString. */
const SASL_TOPIC = 'apim-events-sasl';
const CONNECTION_STRING =
  'Endpoint=sb://portcullis-test.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=c2VjcmV0LWtleQ';

/**
 * log-to-eventhub to a real Apache Kafka broker (KRaft, from its jars on Maven Central) through a real Envoy and
 * engine: every event arrives, in order, also those sent while the broker restarts — the engine holds them in its
 * bounded buffer and no request waits for the broker.
 */
describe('log-to-eventhub to Kafka', () => {
  let kafka: RunningKafka;
  let backend: EchoBackend;
  let stack: SharedStateStack;
  const client = () =>
    new Kafka({ brokers: [kafka.broker], clientId: 'kafka-sink-test', logLevel: logLevel.NOTHING });

  beforeAll(async () => {
    [kafka, backend] = await Promise.all([
      startKafka({ saslUsers: { $ConnectionString: CONNECTION_STRING } }),
      startEchoBackend(),
    ]);
    const admin = client().admin();
    await admin.connect();
    await admin.createTopics({
      topics: [TOPIC, SASL_TOPIC].map((topic) => ({ topic, numPartitions: 1 })),
      waitForLeaders: true,
    });
    await admin.disconnect();
    // The engine process reads the SASL password from its environment (inherited), as from a secret store.
    process.env.PORTCULLIS_TEST_EVENTHUB_CONNECTION = CONNECTION_STRING;
    stack = await startSharedStateStack(
      `
state:
  eventBuffer: 1000
  loggers:
    hub: { kafka: { brokers: ["${kafka.broker}"], topic: ${TOPIC}, clientId: gateway, requestTimeoutMs: 2000 } }
    eventhubs:
      kafka:
        brokers: ["${kafka.saslBroker}"]
        topic: ${SASL_TOPIC}
        requestTimeoutMs: 2000
        sasl: { mechanism: plain, username: $ConnectionString, passwordEnv: PORTCULLIS_TEST_EVENTHUB_CONNECTION }
apis:
${apiYaml('logged', backend.url, [['get', 'GET', '/items/{id}', 'logged.xml']])}
`,
      {
        'logged.xml': policy({
          inbound:
            '<log-to-eventhub logger-id="hub">@(context.Request.Method + " " + context.Request.MatchedParameters["id"])</log-to-eventhub>' +
            '<log-to-eventhub logger-id="eventhubs" partition-key="k">@(context.Request.MatchedParameters["id"])</log-to-eventhub>',
        }),
      },
      1,
    );
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    await backend?.close();
    await kafka?.close();
  });

  /** Offsets written to the topic's one partition (its high watermark). */
  const written = async (topic: string) => {
    const admin = client().admin();
    await admin.connect();
    try {
      const [partition] = await admin.fetchTopicOffsets(topic);
      return Number(partition!.high);
    } finally {
      await admin.disconnect();
    }
  };

  /** Sends requests for ids `from`..`to` one after the other; the slowest request's milliseconds. */
  const log = async (from: number, to: number) => {
    let slowest = 0;
    for (let id = from; id <= to; id++) {
      const started = Date.now();
      const response = await fetch(`${stack.url}/logged/items/${id}`);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      slowest = Math.max(slowest, Date.now() - started);
    }
    return slowest;
  };

  it('delivers every event in order, also those sent while the broker restarts, and no request waits for it', async () => {
    await log(1, 20);
    await until(
      async () => (await written(TOPIC)) >= 20 && (await written(SASL_TOPIC)) >= 20,
      'the first 20 events of each logger in its topic',
      15_000,
    );

    await kafka.stop();
    try {
      // The broker is down: requests answer at once, their events wait in the engine's buffer.
      expect(await log(21, 40)).toBeLessThan(1000);
    } finally {
      await kafka.start();
    }

    // A consumer reads the topic from its start: all 40, in the order they were sent. Delivery is at least once
    // (a batch whose acknowledgement was lost is sent again), so a repeat may follow its first copy.
    const consumer = client().consumer({ groupId: `kafka-sink-${process.pid}` });
    const received: string[] = [];
    const viaSasl: string[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [TOPIC, SASL_TOPIC], fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ topic, message }) => {
          if (topic === SASL_TOPIC) {
            viaSasl.push(message.value?.toString() ?? '');
            expect(message.key?.toString()).toBe('k');
            return;
          }
          received.push(message.value?.toString() ?? '');
          expect(message.headers?.['logger-id']?.toString()).toBe('hub');
        },
      });
      await until(
        () => new Set(received).size >= 40 && new Set(viaSasl).size >= 40,
        'all 40 events of both loggers from the consumer',
        {
          timeoutMs: 30_000,
          detail: () =>
            `received: ${received.join(', ')}\nvia SASL: ${viaSasl.join(', ')}\nengine:\n${stack.engines[0]!.output().slice(-3000)}`,
        },
      );
    } finally {
      await consumer.disconnect();
    }
    const firstCopies = received.filter((event, at) => received.indexOf(event) === at);
    expect(firstCopies).toEqual(Array.from({ length: 40 }, (_, i) => `GET ${i + 1}`));
    expect(viaSasl.filter((event, at) => viaSasl.indexOf(event) === at)).toEqual(
      Array.from({ length: 40 }, (_, i) => `${i + 1}`),
    );

    const metrics = await (await fetch(stack.engines[0]!.metricsUrl)).text();
    expect(metrics).not.toContain('reason="EventDropped"');
  }, 60_000);
});

/**
 * A broker that is not there: the engine holds at most eventBuffer events for it; requests still answer at once,
 * the rest are dropped, counted on /metrics and logged once per interval (not once per event).
 */
describe('log-to-eventhub to a Kafka broker that is down', () => {
  let backend: EchoBackend;
  let stack: SharedStateStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    // A free port nobody listens on: every connection is refused.
    const nowhere = `127.0.0.1:${await freePort()}`;
    stack = await startSharedStateStack(
      `
state:
  eventBuffer: 5
  loggers:
    hub: { kafka: { brokers: ["${nowhere}"], topic: ${TOPIC}, requestTimeoutMs: 1000 } }
apis:
${apiYaml('logged', backend.url, [['get', 'GET', '/items/{id}', 'logged.xml']])}
`,
      {
        'logged.xml': policy({
          inbound: '<log-to-eventhub logger-id="hub">@(context.Request.Url.Path)</log-to-eventhub>',
        }),
      },
      1,
    );
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await backend?.close();
  });

  it('keeps eventBuffer events, drops and counts the rest, logs the drops once, and no request waits', async () => {
    const started = Date.now();
    for (let id = 1; id <= 12; id++) {
      const response = await fetch(`${stack.url}/logged/items/${id}`);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    expect(Date.now() - started).toBeLessThan(3000);
    const engine = stack.engines[0]!;
    const metrics = await (await fetch(engine.metricsUrl)).text();
    expect(metrics).toContain(
      'portcullis_policy_element_total{element="log-to-eventhub",outcome="failed",reason="EventDropped"} 7',
    );
    const dropLines = engine
      .output()
      .split('\n')
      .filter((line) => line.includes('log-to-eventhub buffer full'));
    expect(dropLines).toHaveLength(1);
    expect(dropLines[0]).toContain('5 events');
    // A full Kafka buffer is not a shared-state outage: the line says what failed in its own words.
    expect(dropLines[0]).not.toContain('shared state unavailable');
  }, 30_000);
});
