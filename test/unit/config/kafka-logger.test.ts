import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../../src/config/gateway.js';
import { loadConfigText } from '../../../src/config/load.js';

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
