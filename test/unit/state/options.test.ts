import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import {
  kafkaLoggers,
  maxEmbeddedStreams,
  stateConfigSchema,
  streamLoggers,
} from '../../../src/state/options.js';

const loggers = { audit: { stream: 'audit', maxLength: 100 } };

/** The messages of the issues `state` raises, each as `path: message`. */
function problems(state: unknown): string[] {
  const result = stateConfigSchema.safeParse(state);
  return result.success
    ? []
    : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('state.loggers', () => {
  it('keep their events in Redis or in the embedded store of dataDir', () => {
    expect(problems({ loggers, redis: { url: 'redis://127.0.0.1:6379' } })).toEqual([]);
    expect(problems({ loggers, dataDir: 'state' })).toEqual([]);
  });

  it('without either, the message says what is missing and names the loggers', () => {
    expect(problems({ loggers })).toEqual([
      'loggers: loggers keep their events in state.redis (Redis Streams) or state.dataDir (the embedded store), found neither (loggers: audit)',
    ]);
  });

  it('the embedded store holds a bounded number of streams; loggers may share one', () => {
    const many = (streams: number) =>
      Object.fromEntries(
        Array.from({ length: maxEmbeddedStreams + 1 }, (_, i) => [`l${i}`, { stream: `s${i % streams}` }]),
      );
    expect(problems({ dataDir: 'state', loggers: many(maxEmbeddedStreams) })).toEqual([]);
    expect(problems({ dataDir: 'state', loggers: many(maxEmbeddedStreams + 1) })).toEqual([
      `loggers: the embedded store of state.dataDir holds at most ${maxEmbeddedStreams} streams, found ${maxEmbeddedStreams + 1}: let loggers share streams, or configure state.redis`,
    ]);
    expect(
      problems({ redis: { url: 'redis://127.0.0.1:6379' }, loggers: many(maxEmbeddedStreams + 1) }),
    ).toEqual([]);
  });
});

describe('state.loggers: the Kafka form', () => {
  const eventHubs = {
    brokers: ['my-namespace.servicebus.windows.net:9093'],
    topic: 'apim-events',
    tls: true,
    sasl: { mechanism: 'plain', username: '$ConnectionString', passwordEnv: 'EVENTHUB_CONNECTION' },
  };

  it('needs neither Redis nor dataDir, and sits beside stream loggers', () => {
    expect(problems({ loggers: { hub: { kafka: eventHubs } } })).toEqual([]);
    expect(problems({ dataDir: 'state', loggers: { ...loggers, hub: { kafka: eventHubs } } })).toEqual([]);
    const parsed = stateConfigSchema.parse({
      loggers: { hub: { kafka: { brokers: ['b:9092'], topic: 't' } } },
    });
    expect(kafkaLoggers(parsed.loggers).get('hub')).toEqual({
      brokers: ['b:9092'],
      topic: 't',
      clientId: 'portcullis',
      tls: false,
      requestTimeoutMs: 10_000,
    });
    expect(streamLoggers(parsed.loggers).size).toBe(0);
  });

  it('a stream logger keeps its default maxLength', () => {
    const parsed = stateConfigSchema.parse({ dataDir: 'd', loggers: { audit: { stream: 'a' } } });
    expect(streamLoggers(parsed.loggers).get('audit')).toEqual({ stream: 'a', maxLength: 10_000 });
  });

  it('says what is wrong, at the key', () => {
    expect(problems({ loggers: { hub: {} } })).toEqual([
      'loggers.hub: a logger is { stream, maxLength } (a stream of the state store), { kafka: { brokers, topic } } or { otlp: { endpoint } }, found none of them',
    ]);
    expect(problems({ loggers: { hub: { kafka: { ...eventHubs, brokers: ['no-port'] } } } })).toEqual([
      'loggers.hub.kafka.brokers.0: a broker is host:port',
    ]);
    expect(
      problems({
        loggers: { hub: { kafka: { ...eventHubs, sasl: { mechanism: 'plain', username: 'u' } } } },
      }),
    ).toEqual(['loggers.hub.kafka.sasl: sasl needs exactly one of password or passwordEnv']);
    expect(
      problems({ loggers: { hub: { kafka: { ...eventHubs, tls: { ca: 'ca.pem', cert: 'client.pem' } } } } }),
    ).toEqual(['loggers.hub.kafka.tls: a client certificate needs both cert and key']);
    expect(
      problems({ loggers: { hub: { kafka: { ...eventHubs, tls: { ca: 'ca.pem', verify: false } } } } }),
    ).toEqual(['loggers.hub.kafka.tls: Unrecognized key: "verify"']);
    expect(
      problems({ loggers: { hub: { kafka: { ...eventHubs, tls: { ca: 'ca.pem', servername: 'kafka' } } } } }),
    ).toEqual([]);
    expect(problems({ loggers: { hub: { kafka: eventHubs, maxLength: 5 } } })).toEqual([
      'loggers.hub.maxLength: maxLength trims a state-store stream; a Kafka topic keeps what its retention says',
    ]);
  });

  it('a gateway file reports a Kafka logger mistake at its file:line:col, without the password', () => {
    const text = [
      'state:',
      '  loggers:',
      '    hub:',
      '      kafka:',
      '        brokers: [b:9092]',
      '        topic: "bad topic"',
      '        sasl: { mechanism: gssapi, username: u, password: hunter2 }',
    ].join('\n');
    let message = '';
    try {
      parseConfig(text, 'gateway.yaml');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('gateway.yaml:6:9');
    expect(message).toContain(
      'state.loggers.hub.kafka.topic: a Kafka topic name is 1 to 249 of A-Z a-z 0-9 . _ -',
    );
    expect(message).toMatch(/gateway\.yaml:7:\d+.*state\.loggers\.hub\.kafka\.sasl\.mechanism/);
    expect(message).not.toContain('hunter2');
  });
});
