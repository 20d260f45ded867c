import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../../src/config/gateway.js';
import { loadConfigText } from '../../../src/config/load.js';
import { kafkaTlsOptions } from '../../../src/state/kafka-event-stream.js';

const FILE = '/tmp/portcullis-kafka-logger/gateway.yaml';
const text = [
  'state:',
  '  loggers:',
  '    hub:',
  '      kafka:',
  '        brokers: [ns.servicebus.windows.net:9093]',
  '        topic: apim',
  '        tls: true',
  '        sasl: { mechanism: plain, username: $ConnectionString, passwordEnv: PORTCULLIS_TEST_UNSET_HUB }',
].join('\n');

describe('a Kafka logger in the gateway file', () => {
  it('whose passwordEnv is not set is a load error at that key', async () => {
    delete process.env.PORTCULLIS_TEST_UNSET_HUB;
    await expect(async () =>
      compileGateway(await loadConfigText(text, FILE, new Map([[FILE, text]]))),
    ).rejects.toThrow(
      /gateway\.yaml:8:\d+: state\.loggers\.hub\.kafka\.sasl\.passwordEnv: environment variable PORTCULLIS_TEST_UNSET_HUB is not set \(the SASL password of logger "hub"\)/,
    );
  });

  it('loads when it is set', async () => {
    process.env.PORTCULLIS_TEST_UNSET_HUB = 'Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKey=x';
    try {
      compileGateway(await loadConfigText(text, FILE, new Map([[FILE, text]])));
    } finally {
      delete process.env.PORTCULLIS_TEST_UNSET_HUB;
    }
  });
});

describe('a Kafka logger with a private CA', () => {
  const withCa = (ca: string) =>
    [
      'state:',
      '  loggers:',
      '    own:',
      '      kafka:',
      '        brokers: [kafka-1.internal:9093]',
      '        topic: apim',
      `        tls: { ca: ${JSON.stringify(ca)}, servername: kafka-1 }`,
    ].join('\n');
  const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

  it('whose CA file is not there is a load error at that key', async () => {
    const text = withCa('certs/missing-ca.pem');
    await expect(async () =>
      compileGateway(await loadConfigText(text, FILE, new Map([[FILE, text]]))),
    ).rejects.toThrow(
      /gateway\.yaml:7:\d+: state\.loggers\.own\.kafka\.tls\.ca: PEM file "certs\/missing-ca\.pem" not found \(looked at \/tmp\/portcullis-kafka-logger\/certs\/missing-ca\.pem\)/,
    );
  });

  it('takes the CA written in place, or reads its file relative to the configuration', async () => {
    const inline = withCa(PEM);
    compileGateway(await loadConfigText(inline, FILE, new Map([[FILE, inline]])));
    expect(kafkaTlsOptions({ ca: PEM, servername: 'kafka-1' }, '/nowhere', 'here')).toEqual({
      ca: PEM,
      servername: 'kafka-1',
    });
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-kafka-tls-'));
    try {
      await writeFile(path.join(directory, 'ca.pem'), PEM);
      expect(kafkaTlsOptions({ ca: 'ca.pem' }, directory, 'here')).toEqual({ ca: PEM });
      expect(() => kafkaTlsOptions({ ca: 'gone.pem' }, directory, 'state.loggers.own.kafka')).toThrow(
        `state.loggers.own.kafka.tls.ca: cannot read ${path.join(directory, 'gone.pem')}`,
      );
      expect(kafkaTlsOptions(true, directory, 'here')).toBe(true);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
