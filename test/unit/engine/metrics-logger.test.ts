import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngineServices, type EngineServices } from '../../../src/engine/services.js';
import { type StateConfig, stateConfigSchema } from '../../../src/state/options.js';
import { recordingLogger } from '../../doubles/logger.js';

/** Custom metrics (emit-metric, llm-emit-token-metric) as JSON events on the logger `state.metricsLogger` names. */
describe('state.metricsLogger', () => {
  let services: EngineServices | undefined;
  let directory: string | undefined;

  afterEach(async () => {
    await services?.close();
    if (directory) await rm(directory, { recursive: true, force: true });
    services = directory = undefined;
  });

  /** The services over an embedded store with `loggers`; what the metric logger got, and what was logged. */
  async function emitOne(state: Partial<StateConfig>) {
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-metrics-logger-'));
    const { logger, lines } = recordingLogger();
    services = createEngineServices({ backends: new Map(), logger, state: { dataDir: directory, ...state } });
    services.metrics!.emit({
      namespace: 'school',
      name: 'reads',
      value: 2,
      dimensions: [['API ID', 'courses']],
    });
    await services.eventStream!.flush();
    const read = async (loggerId: string) =>
      (await services!.eventStream!.read(loggerId, { limit: 100 })).map(
        (event) => JSON.parse(event.message) as object,
      );
    return { read, warnings: lines.filter((line) => line.level === 'warn').map((line) => line.message) };
  }

  it('sends each custom metric to the logger it names, whatever its id', async () => {
    const { read, warnings } = await emitOne({
      metricsLogger: 'tokens',
      loggers: { tokens: { stream: 'token-metrics' }, metrics: { stream: 'other' } },
    });
    expect(await read('tokens')).toEqual([
      expect.objectContaining({
        namespace: 'school',
        name: 'reads',
        value: 2,
        dimensions: { 'API ID': 'courses' },
      }),
    ]);
    // A logger that is merely named `metrics` gets nothing once metricsLogger says otherwise.
    expect(await read('metrics')).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('still feeds a logger named `metrics` in a file written before the key, and says it is deprecated', async () => {
    const { read, warnings } = await emitOne({ loggers: { metrics: { stream: 'token-metrics' } } });
    expect(await read('metrics')).toEqual([expect.objectContaining({ name: 'reads' })]);
    expect(warnings).toEqual([
      'state.loggers.metrics receives the custom metrics because of its name, which is deprecated: add "metricsLogger: metrics" to the state section (a later version will no longer go by the name)',
    ]);
  });

  it('must name a configured logger', () => {
    const parsed = stateConfigSchema.safeParse({
      dataDir: 'd',
      metricsLogger: 'tokens',
      loggers: { audit: { stream: 'a' } },
    });
    expect(parsed.error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)).toEqual([
      'metricsLogger: names no logger of state.loggers (configured: audit), got "tokens"',
    ]);
  });
});
