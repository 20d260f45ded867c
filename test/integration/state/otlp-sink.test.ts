import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineServices, type EngineServices } from '../../../src/engine/services.js';
import { compilePolicyDocument, readPolicyDocument } from '../../../src/policy/document.js';
import { buildPipeline } from '../../../src/policy/pipeline.js';
import { PipelineRun } from '../../../src/policy/runner.js';
import { recordingLogger } from '../../doubles/logger.js';
import { type OtlpReceiver, startOtlpReceiver } from '../../doubles/otlp-receiver.js';
import { until } from '../../processes/wait.js';

/** Runs `statements` as an operation's inbound section through the real runner on `services`. */
async function inbound(services: EngineServices, statements: string) {
  const xml = `<policies><inbound>${statements}<return-response><set-status code="200" /></return-response></inbound><backend /><outbound /><on-error /></policies>`;
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
  return run.onRequest();
}

/**
 * log-to-eventhub to an OpenTelemetry collector (a logger `{ otlp: { endpoint } }`): each event an OTLP log record
 * sent by the logs SDK's OTLP/HTTP exporter to an OTLP endpoint the test serves; no request waits for it, and what
 * the bounded buffer cannot hold is dropped and counted, as for the other sinks.
 */
describe('log-to-eventhub to OTLP logs', () => {
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });

  afterAll(async () => {
    await receiver?.close();
  });

  it('sends each event as a log record: the message its body, the logger and partition its attributes', async () => {
    const services = createEngineServices({
      backends: new Map(),
      state: {
        loggers: {
          otel: {
            otlp: {
              endpoint: receiver.endpoint,
              headers: { 'x-api-key': 'k' },
              serviceName: 'gw-events',
              timeoutMs: 10_000,
            },
          },
        },
      },
      logger: recordingLogger().logger,
    });
    try {
      for (let index = 0; index < 3; index++) {
        const outcome = await inbound(
          services,
          `<log-to-eventhub logger-id="otel" partition-key="k-${index}">@("GET " + ${index})</log-to-eventhub>`,
        );
        expect(outcome.kind).toBe('respond');
      }
      await until(() => receiver.logs.length >= 3, 'the three records', 10_000);
      expect(receiver.logs.map((record) => record.body)).toEqual(['GET 0', 'GET 1', 'GET 2']);
      expect(receiver.logs[0]).toMatchObject({
        service: 'gw-events',
        severityText: 'INFO',
        attributes: { 'portcullis.logger_id': 'otel', 'portcullis.partition_key': 'k-0' },
        traceId: '',
      });
      expect(Number(BigInt(receiver.logs[0]!.timeUnixNano) / 1_000_000n)).toBeGreaterThan(
        Date.now() - 60_000,
      );
      expect(services.counters.get('log-to-eventhub', 'failed', 'EventDropped')).toBe(0);
    } finally {
      await services.close();
    }
  });

  it('never holds a request up for a collector that does not answer: past the buffer, events are dropped and counted', async () => {
    // Accepts connections and never answers.
    const silent: Server = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const services = createEngineServices({
      backends: new Map(),
      state: {
        loggers: {
          otel: {
            otlp: {
              endpoint: `http://127.0.0.1:${port}`,
              headers: {},
              serviceName: 'portcullis-engine',
              timeoutMs: 1000,
            },
          },
        },
        eventBuffer: 2,
      },
      logger: recordingLogger().logger,
    });
    try {
      const started = Date.now();
      for (let index = 0; index < 6; index++)
        await inbound(services, `<log-to-eventhub logger-id="otel">event ${index}</log-to-eventhub>`);
      expect(Date.now() - started).toBeLessThan(1000);
      // The buffer holds two (the first among them while it is being sent): the other four are dropped.
      expect(services.counters.get('log-to-eventhub', 'failed', 'EventDropped')).toBe(4);
    } finally {
      silent.closeAllConnections();
      silent.close();
      await services.close();
    }
  });
});
