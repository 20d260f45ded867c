import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfig } from '../../../src/config/load.js';
import {
  metricsExport,
  otlpHeaders,
  otlpTracesUrl,
  tracedServiceName,
} from '../../../src/config/telemetry-schema.js';
import { formatDiagnostic } from '../../../src/diagnostic.js';

function problems(text: string): string[] {
  try {
    parseConfig(text, 'gateway.yaml');
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatDiagnostic);
    throw error;
  }
  return [];
}

describe('telemetry.otlp', () => {
  it('reads the collector, its headers, the service name prefix and the sampling ratio, with defaults', () => {
    const config = parseConfig(
      'telemetry:\n  otlp:\n    endpoint: http://collector:4318\n    headers: { x-api-key: { env: KEY } }\n',
      'gateway.yaml',
    );
    const otlp = config.telemetry?.otlp;
    expect(otlp).toEqual({
      endpoint: 'http://collector:4318',
      headers: { 'x-api-key': { env: 'KEY' } },
      serviceNamePrefix: 'portcullis',
      samplingRatio: 1,
      metricsIntervalSeconds: 60,
    });
    if (!otlp) throw new Error('unreachable');
    expect(otlpTracesUrl(otlp)).toBe('http://collector:4318/v1/traces');
    expect(metricsExport(otlp, 'service', { KEY: 'k-1' })).toEqual({
      metricsUrl: 'http://collector:4318/v1/metrics',
      headers: { 'x-api-key': 'k-1' },
      serviceName: 'portcullis-service',
      intervalMs: 60_000,
    });
    expect(tracedServiceName(otlp, 'engine')).toBe('portcullis-engine');
    expect(otlpHeaders(otlp, { KEY: 'k-1' })).toEqual({ 'x-api-key': 'k-1' });
    expect(() => otlpHeaders(otlp, {})).toThrow(
      'telemetry.otlp.headers.x-api-key: environment variable KEY is not set',
    );
    expect(parseConfig('{}', 'gateway.yaml').telemetry).toBeUndefined();
  });

  it('says where a wrong value is, and never repeats a header value', () => {
    expect(
      problems(
        [
          'telemetry:',
          '  otlp:',
          '    endpoint: ftp://collector/v1/traces',
          '    samplingRatio: 1.5',
          '    headers: { authorization: 42 }',
          '    servicePrefix: x',
        ].join('\n'),
      ),
    ).toEqual([
      'gateway.yaml:3:5: telemetry.otlp.endpoint: must be an http:// or https:// URL without a path (the collector\'s OTLP/HTTP base, e.g. "http://collector:4318"), got "ftp://collector/v1/traces"',
      'gateway.yaml:5:16: telemetry.otlp.headers.authorization: matches none of the forms allowed here',
      'gateway.yaml:4:5: telemetry.otlp.samplingRatio: must be at most 1, got 1.5',
      'gateway.yaml:6:5: telemetry.otlp.servicePrefix: unknown key "servicePrefix"',
    ]);
  });
});
