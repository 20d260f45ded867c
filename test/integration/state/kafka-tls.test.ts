import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type CertificateWorkshop, certificateWorkshop } from '../../processes/certificates.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';
import { type RunningKafka, startKafka } from '../../processes/kafka.js';
import { until } from '../../processes/wait.js';
import { type SharedStateStack, startSharedStateStack } from './harness.js';

/** Over TLS, verified against the CA the test made. */
const TLS_TOPIC = 'apim-events-tls';
/** SASL PLAIN over TLS, as Event Hubs' Kafka endpoint: user $ConnectionString, the connection string its password. */
const SASL_SSL_TOPIC = 'apim-events-sasl-ssl';
/** TLS verified against the system's CAs, which do not know the test's CA: nothing may arrive. */
const UNTRUSTED_TOPIC = 'apim-events-untrusted';
const CONNECTION_STRING =
  'Endpoint=sb://portcullis-test.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=dGxzLWtleQ';
const EVENTS = 15;

/**
 * log-to-eventhub to a real Kafka broker (KRaft) whose SSL and SASL_SSL listeners carry a certificate from a private
 * CA the test makes: the loggers trust that CA from a PEM file beside the gateway file (`tls: { ca }`), one of them
 * also logs in with SASL PLAIN; a consumer reads back every event. A logger left on the system's CAs refuses the
 * broker's certificate and delivers nothing.
 */
describe('log-to-eventhub to Kafka over TLS with a private CA', () => {
  let certificates: CertificateWorkshop;
  let kafka: RunningKafka;
  let backend: EchoBackend;
  let stack: SharedStateStack;
  // The test's own client reads through the plaintext listener: what the broker stored, whatever the loggers used.
  const client = () =>
    new Kafka({ brokers: [kafka.broker], clientId: 'kafka-tls-test', logLevel: logLevel.NOTHING });

  beforeAll(async () => {
    certificates = await certificateWorkshop();
    const ca = await certificates.authority('kafka-ca', '/CN=Portcullis test Kafka CA');
    const server = await ca.issue({
      name: 'kafka-broker',
      subject: '/CN=kafka-broker',
      dns: ['kafka-broker.test'],
      ips: ['127.0.0.1'],
      usage: 'server',
    });
    [kafka, backend] = await Promise.all([
      startKafka({
        saslUsers: { $ConnectionString: CONNECTION_STRING },
        tls: { certificateChain: server.pem, key: server.key },
      }),
      startEchoBackend(),
    ]);
    const admin = client().admin();
    await admin.connect();
    await admin.createTopics({
      topics: [TLS_TOPIC, SASL_SSL_TOPIC, UNTRUSTED_TOPIC].map((topic) => ({ topic, numPartitions: 1 })),
      waitForLeaders: true,
    });
    await admin.disconnect();
    process.env.PORTCULLIS_TEST_EVENTHUB_TLS_CONNECTION = CONNECTION_STRING;
    stack = await startSharedStateStack(
      `
state:
  eventBuffer: 1000
  loggers:
    own:
      kafka: { brokers: ["${kafka.sslBroker}"], topic: ${TLS_TOPIC}, requestTimeoutMs: 2000, tls: { ca: kafka-ca.pem } }
    eventhubs:
      kafka:
        brokers: ["${kafka.saslSslBroker}"]
        topic: ${SASL_SSL_TOPIC}
        requestTimeoutMs: 2000
        # The certificate names kafka-broker.test: the broker is dialled by address, checked by that name.
        tls: { ca: kafka-ca.pem, servername: kafka-broker.test }
        sasl: { mechanism: plain, username: $ConnectionString, passwordEnv: PORTCULLIS_TEST_EVENTHUB_TLS_CONNECTION }
    untrusted:
      kafka: { brokers: ["${kafka.sslBroker}"], topic: ${UNTRUSTED_TOPIC}, requestTimeoutMs: 1000, tls: true }
apis:
${apiYaml('logged', backend.url, [['get', 'GET', '/items/{id}', 'logged.xml']])}
`,
      {
        'kafka-ca.pem': ca.pem,
        'logged.xml': policy({
          inbound: ['own', 'eventhubs', 'untrusted']
            .map(
              (logger) =>
                `<log-to-eventhub logger-id="${logger}">@("${logger} " + context.Request.MatchedParameters["id"])</log-to-eventhub>`,
            )
            .join(''),
        }),
      },
      1,
    );
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await backend?.close();
    await kafka?.close();
    await certificates?.remove();
    delete process.env.PORTCULLIS_TEST_EVENTHUB_TLS_CONNECTION;
  });

  it('delivers every event over TLS and over SASL_SSL, and none to a broker whose CA it does not trust', async () => {
    for (let id = 1; id <= EVENTS; id++) {
      const response = await fetch(`${stack.url}/logged/items/${id}`);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    const consumer = client().consumer({ groupId: `kafka-tls-${process.pid}` });
    const received = new Map<string, string[]>([
      [TLS_TOPIC, []],
      [SASL_SSL_TOPIC, []],
      [UNTRUSTED_TOPIC, []],
    ]);
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [...received.keys()], fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ topic, message }) => {
          received.get(topic)!.push(message.value?.toString() ?? '');
        },
      });
      await until(
        () =>
          new Set(received.get(TLS_TOPIC)).size >= EVENTS &&
          new Set(received.get(SASL_SSL_TOPIC)).size >= EVENTS,
        `all ${EVENTS} events of both TLS loggers from the consumer`,
        {
          timeoutMs: 30_000,
          detail: () =>
            `${JSON.stringify(Object.fromEntries(received))}\nengine:\n${stack.engines[0]!.output().slice(-3000)}`,
        },
      );
    } finally {
      await consumer.disconnect();
    }
    const firstCopies = (events: readonly string[]) =>
      events.filter((event, at) => events.indexOf(event) === at);
    expect(firstCopies(received.get(TLS_TOPIC)!)).toEqual(
      Array.from({ length: EVENTS }, (_, i) => `own ${i + 1}`),
    );
    expect(firstCopies(received.get(SASL_SSL_TOPIC)!)).toEqual(
      Array.from({ length: EVENTS }, (_, i) => `eventhubs ${i + 1}`),
    );
    // The system's CAs do not vouch for the test's: that logger's sends fail on the certificate and are retried.
    expect(received.get(UNTRUSTED_TOPIC)).toEqual([]);
    await until(
      () =>
        stack.engines[0]!.output()
          .split('\n')
          .some(
            (line) =>
              line.includes('log-to-eventhub: Kafka does not take the events') && /certificate/i.test(line),
          ),
      'the engine to report the untrusted certificate',
      { timeoutMs: 15_000, detail: () => stack.engines[0]!.output().slice(-3000) },
    );
  }, 90_000);
});
