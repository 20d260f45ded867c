import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../../src/config/gateway.js';
import { loadConfigText } from '../../../src/config/load.js';

const FILE = '/tmp/portcullis-otlp-logger/gateway.yaml';
const load = async (text: string) =>
  compileGateway(await loadConfigText(text, FILE, new Map([[FILE, text]])));
const logger = (body: string) =>
  ['state:', '  loggers:', '    otel:', ...body.split('\n').map((l) => `      ${l}`)].join('\n');

describe('an OTLP logger in the gateway file', () => {
  it('loads with the collector base URL and headers', async () => {
    await load(logger('otlp: { endpoint: http://collector:4318, headers: { x-api-key: k } }'));
  });

  it('is refused with a path in the endpoint, beside another form, or with maxLength', async () => {
    await expect(load(logger('otlp: { endpoint: http://collector:4318/v1/logs }'))).rejects.toThrow(
      /state\.loggers\.otel\.otlp\.endpoint: must be an http:\/\/ or https:\/\/ URL without a path .* records go to <endpoint>\/v1\/logs/,
    );
    await expect(load(logger('stream: audit\notlp: { endpoint: http://collector:4318 }'))).rejects.toThrow(
      /found stream and otlp/,
    );
    await expect(load(logger('maxLength: 5\notlp: { endpoint: http://collector:4318 }'))).rejects.toThrow(
      /state\.loggers\.otel\.maxLength: maxLength trims a state-store stream; a collector keeps what its pipeline says/,
    );
  });

  it('whose header comes from an unset environment variable is a load error at that key', async () => {
    delete process.env.PORTCULLIS_TEST_UNSET_COLLECTOR;
    await expect(
      load(
        logger(
          'otlp: { endpoint: http://collector:4318, headers: { x-api-key: { env: PORTCULLIS_TEST_UNSET_COLLECTOR } } }',
        ),
      ),
    ).rejects.toThrow(
      /state\.loggers\.otel\.otlp\.headers\.x-api-key\.env: environment variable PORTCULLIS_TEST_UNSET_COLLECTOR is not set \(header x-api-key of logger "otel"\)/,
    );
  });
});
