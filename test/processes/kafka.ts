import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { freePort } from '../../src/config/plan.js';
import { type RunningChild, startChild } from './child.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The Kafka version test/kafka/pom.xml pins; scripts/setup.js --tests fetches its jars. */
const kafkaVersion = /<artifactId>kafka-broker<\/artifactId>\s*<version>([^<]+)<\/version>/.exec(
  readFileSync(path.join(root, 'test', 'kafka', 'pom.xml'), 'utf8'),
)![1]!;
const libs = path.join(root, '.portcullis', `kafka-${kafkaVersion}`, 'libs');

export interface RunningKafka {
  /** `127.0.0.1:<port>`, the broker's client listener (no authentication). */
  readonly broker: string;
  /** `127.0.0.1:<port>`, a listener that takes SASL PLAIN logins of `saslUsers` (as Event Hubs' endpoint, without TLS). */
  readonly saslBroker: string;
  /** With `tls`: `127.0.0.1:<port>`, a TLS listener (no authentication). */
  readonly sslBroker?: string;
  /** With `tls`: `127.0.0.1:<port>`, SASL PLAIN logins of `saslUsers` over TLS: Event Hubs' Kafka endpoint. */
  readonly saslSslBroker?: string;
  /** Stops the broker (SIGTERM: a controlled shutdown); its data and ports stay for `start`. */
  stop(): Promise<void>;
  /** Starts it again on the same ports and data: the topics and their events are still there. */
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  close(): Promise<void>;
  output(): string;
}

const java = (args: readonly string[]) => [
  '-Xms64m',
  '-Xmx384m',
  // A test broker lives for seconds: the client compiler alone starts it about twice as fast.
  '-XX:TieredStopAtLevel=1',
  '-XX:+UseSerialGC',
  '-Djava.awt.headless=true',
  '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
  '-cp',
  `${libs}/*`,
  ...args,
];

/** Whether the broker answers a metadata request (it listens a little before it serves). */
async function serves(broker: string): Promise<boolean> {
  const admin = new Kafka({
    brokers: [broker],
    clientId: 'kafka-helper',
    connectionTimeout: 500,
    requestTimeout: 1000,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
  }).admin();
  try {
    await admin.connect();
    await admin.describeCluster();
    return true;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * A real single-node Apache Kafka broker (KRaft: broker and controller in one process) from the jars
 * `scripts/setup.js --tests` fetched with Maven, run by the machine's Java on free loopback ports. Its storage is
 * formatted with a random cluster id in a temporary directory, then it starts; resolves once it answers a metadata
 * request. Topics are created on first use with one partition.
 */
export async function startKafka(
  options: {
    saslUsers?: Readonly<Record<string, string>>;
    /**
     * Adds a TLS listener and a SASL_SSL one with this server certificate (PEM, its chain) and its unencrypted
     * PKCS#8 key (PEM): the broker reads them as a PEM keystore.
     */
    tls?: { readonly certificateChain: string; readonly key: string };
  } = {},
): Promise<RunningKafka> {
  if (!existsSync(path.join(libs, `kafka_2.13-${kafkaVersion}.jar`)))
    throw new Error(
      `Kafka ${kafkaVersion}'s jars are not in ${libs}: run \`node scripts/setup.js --tests\` (needs Java 17+ and Maven)`,
    );
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-kafka-'));
  const [port, saslPort, controllerPort] = [await freePort(), await freePort(), await freePort()];
  const broker = `127.0.0.1:${port}`;
  const saslBroker = `127.0.0.1:${saslPort}`;
  const [sslBroker, saslSslBroker] = options.tls
    ? [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`]
    : [];
  const keystore = path.join(directory, 'broker-keystore.pem');
  if (options.tls)
    await writeFile(keystore, `${options.tls.key.trim()}\n${options.tls.certificateChain.trim()}\n`);
  // The JAAS line of the PLAIN server: user_<name>="<password>" per user (quoted: a connection string holds ; and =).
  const plainUsers = Object.entries(options.saslUsers ?? {})
    .map(([name, password]) => `user_${name}="${password.replace(/["\\]/g, '')}"`)
    .join(' ');
  const clientListeners = [
    `PLAINTEXT://${broker}`,
    `SASL_PLAINTEXT://${saslBroker}`,
    ...(options.tls ? [`SSL://${sslBroker}`, `SASL_SSL://${saslSslBroker}`] : []),
  ].join(',');
  const properties = path.join(directory, 'server.properties');
  await writeFile(
    properties,
    [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
      `listeners=${clientListeners},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=${clientListeners}`,
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT',
      'sasl.enabled.mechanisms=PLAIN',
      `listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required ${plainUsers};`,
      ...(options.tls
        ? [
            `listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required ${plainUsers};`,
            // The key and its certificate chain in one PEM file; no client certificates asked for.
            'ssl.keystore.type=PEM',
            `ssl.keystore.location=${keystore}`,
            'ssl.client.auth=none',
          ]
        : []),
      'inter.broker.listener.name=PLAINTEXT',
      `log.dirs=${path.join(directory, 'data')}`,
      'num.partitions=1',
      'offsets.topic.replication.factor=1',
      'offsets.topic.num.partitions=1',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'share.coordinator.state.topic.replication.factor=1',
      'share.coordinator.state.topic.min.isr=1',
      // Consumers of a fresh group get their partitions at once rather than after 3 s.
      'group.initial.rebalance.delay.ms=0',
      '',
    ].join('\n'),
  );
  // A base64url id starting with "-" would be read by the storage tool as an option (as Kafka's own random ids
  // avoid): the first byte's top bit cleared keeps the first character in A–Z, a–f.
  const idBytes = randomBytes(16);
  idBytes[0] = idBytes[0]! & 0x7f;
  const clusterId = idBytes.toString('base64url');
  const format = spawnSync(
    'java',
    java(['kafka.tools.StorageTool', 'format', '--cluster-id', clusterId, '--config', properties]),
    { encoding: 'utf8', timeout: 60_000 },
  );
  if (format.status !== 0)
    throw new Error(
      `formatting Kafka's storage failed (${format.error?.message ?? `exit ${format.status}`}):\n${format.stdout}${format.stderr}`,
    );

  let running: RunningChild | undefined;
  let lastOutput = '';
  const start = async () => {
    running = await startChild('java', java(['kafka.Kafka', properties]), {
      what: `Kafka broker on ${broker}`,
      ready: () => serves(broker),
      timeoutMs: 45_000,
    });
  };
  const stop = async () => {
    const child = running;
    running = undefined;
    if (child === undefined) return;
    await child.stop(15_000);
    lastOutput = child.output();
  };
  await start();
  return {
    broker,
    saslBroker,
    ...(sslBroker && saslSslBroker ? { sslBroker, saslSslBroker } : {}),
    start,
    stop,
    async close() {
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
    output: () => running?.output() ?? lastOutput,
  };
}
