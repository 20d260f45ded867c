import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import type * as KafkaJs from 'kafkajs';
import type { Message, Producer, SASLOptions } from 'kafkajs';
import {
  type BatchOutcome,
  EventStream,
  type EventStreamOptions,
  type RetainedEvent,
  type StreamEvent,
} from './event-stream.js';
import { lazyPackage } from './lazy-package.js';
import { isInlinePem, type KafkaTarget } from './options.js';

/** kafkajs, loaded when a Kafka logger first connects (lazy-package.ts). */
const kafkajs = lazyPackage<typeof KafkaJs>('kafkajs');

/** A logger's target with its TLS settings read (the PEM files' contents), as kafkajs takes them. */
export type KafkaConnection = Omit<KafkaTarget, 'tls'> & { readonly tls: boolean | ConnectionOptions };

/** A Kafka client's identity: loggers with the same brokers, credentials and TLS share one producer. */
function connectionKey(target: KafkaConnection): string {
  return JSON.stringify([target.brokers, target.clientId, target.tls, target.sasl, target.requestTimeoutMs]);
}

/**
 * `tls` as Node's TLS options, its PEM files read now (relative to `directory`, the configuration file's folder),
 * so a file that cannot be read stops the start, not the first event. `where` names the logger in that error.
 */
export function kafkaTlsOptions(
  tls: KafkaTarget['tls'],
  directory: string,
  where: string,
): boolean | ConnectionOptions {
  if (typeof tls === 'boolean') return tls;
  const pem = (key: 'ca' | 'cert' | 'key') => {
    const source = tls[key];
    if (source === undefined || isInlinePem(source)) return source;
    const file = path.resolve(directory, source);
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(`${where}.tls.${key}: cannot read ${file}: ${(error as Error).message}`);
    }
  };
  const [ca, cert, key] = [pem('ca'), pem('cert'), pem('key')];
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    ...(tls.servername === undefined ? {} : { servername: tls.servername }),
  };
}

function saslOptions(sasl: NonNullable<KafkaTarget['sasl']>): SASLOptions {
  const password = sasl.password ?? process.env[sasl.passwordEnv ?? ''];
  if (password === undefined)
    throw new Error(`environment variable ${sasl.passwordEnv} (kafka.sasl.passwordEnv) is not set`);
  return { mechanism: sasl.mechanism, username: sasl.username, password };
}

/**
 * log-to-eventhub to Kafka topics (Azure Event Hubs' Kafka endpoint among them): one stream per connection
 * (brokers, credentials, TLS), shared by the loggers that name the same one, each with its own bounded buffer, so a
 * cluster that is down holds up only its own loggers. Keyed by logger id.
 */
export function openKafkaStreams(
  targets: ReadonlyMap<string, KafkaTarget>,
  options: Omit<EventStreamOptions<KafkaConnection>, 'targets'>,
  /** The folder TLS files are relative to: the configuration file's. */
  directory = '.',
): Map<string, KafkaEventStream> {
  const byConnection = new Map<string, Map<string, KafkaConnection>>();
  for (const [loggerId, target] of targets) {
    const connection: KafkaConnection = {
      ...target,
      tls: kafkaTlsOptions(target.tls, directory, `state.loggers.${loggerId}.kafka`),
    };
    const key = connectionKey(connection);
    const loggers = byConnection.get(key) ?? new Map<string, KafkaConnection>();
    loggers.set(loggerId, connection);
    byConnection.set(key, loggers);
  }
  const streams = new Map<string, KafkaEventStream>();
  for (const loggers of byConnection.values()) {
    const stream = new KafkaEventStream({ ...options, targets: loggers });
    for (const loggerId of loggers.keys()) streams.set(loggerId, stream);
  }
  return streams;
}

/**
 * The loggers of one Kafka connection. The bounded buffer, ordered batches and retries are EventStream's; here a
 * batch becomes one produce request, acknowledged by all in-sync replicas, one in flight at a time so batches land
 * in the order they were sent. A failed send drops the producer: the next attempt connects anew (the broker may
 * have restarted or moved), and the batch is sent again (at least once). Each event's key is its partition-key
 * (else its partition-id), so one key's events stay in one partition and in order; headers carry the logger id
 * and the partition-id.
 */
export class KafkaEventStream extends EventStream<KafkaConnection> {
  #producer: Promise<Producer> | undefined;

  protected async writeBatch(batch: readonly StreamEvent[]): Promise<BatchOutcome> {
    const topicMessages = new Map<string, Message[]>();
    for (const event of batch) {
      const { topic } = this.target(event.loggerId);
      const messages = topicMessages.get(topic) ?? [];
      messages.push(kafkaMessage(event));
      topicMessages.set(topic, messages);
    }
    const target = this.target(batch[0]!.loggerId);
    try {
      this.#producer ??= connect(target);
      await (await this.#producer).sendBatch({
        acks: -1,
        timeout: target.requestTimeoutMs,
        topicMessages: [...topicMessages].map(([topic, messages]) => ({ topic, messages })),
      });
    } catch (error) {
      await this.#dropProducer();
      throw new Error(`kafka ${target.brokers.join(',')}: ${(error as Error).message}`);
    }
    return { written: batch.length, refused: [] };
  }

  async read(loggerId: string): Promise<RetainedEvent[]> {
    const { topic } = this.target(loggerId);
    throw new Error(`logger "${loggerId}" writes to the Kafka topic ${topic}: read it with a Kafka consumer`);
  }

  override async close(): Promise<void> {
    await super.close();
    await this.#dropProducer();
  }

  async #dropProducer(): Promise<void> {
    const producer = this.#producer;
    this.#producer = undefined;
    try {
      await (await producer)?.disconnect();
    } catch {
      // It failed to connect, or the connection is already gone: nothing to close.
    }
  }
}

/** A connected producer; retries are few and short, because the stream retries the whole batch itself. */
async function connect(target: KafkaConnection): Promise<Producer> {
  const { Kafka, logLevel, Partitioners } = kafkajs();
  const kafka = new Kafka({
    clientId: target.clientId,
    brokers: target.brokers,
    ssl: target.tls,
    ...(target.sasl === undefined ? {} : { sasl: saslOptions(target.sasl) }),
    connectionTimeout: Math.min(target.requestTimeoutMs, 3000),
    requestTimeout: target.requestTimeoutMs,
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
    // Failures reach the stream's onError (logged once per interval); kafkajs's own log would repeat them.
    logLevel: logLevel.NOTHING,
  });
  const producer = kafka.producer({
    maxInFlightRequests: 1,
    allowAutoTopicCreation: true,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  return producer;
}

function kafkaMessage(event: StreamEvent): Message {
  const key = event.partitionKey ?? event.partitionId;
  return {
    value: event.message,
    ...(key === undefined ? {} : { key }),
    headers: {
      'logger-id': event.loggerId,
      ...(event.partitionId === undefined ? {} : { 'partition-id': event.partitionId }),
    },
  };
}
