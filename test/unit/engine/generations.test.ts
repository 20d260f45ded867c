import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileGateway } from '../../../src/config/gateway.js';
import { loadConfigFile } from '../../../src/config/load.js';
import {
  ConfigReloader,
  type EngineGeneration,
  type ReloadOutcome,
  SwappableExchanges,
} from '../../../src/engine/generations.js';
import type { Exchange } from '../../../src/extproc/exchange.js';
import { until } from '../../processes/wait.js';

async function folder(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'portcullis-reload-'));
}

const setHeader = (value: string) =>
  `<policies><inbound><set-header name="x-seen" exists-action="override"><value>${value}</value></set-header></inbound><backend><forward-request /></backend><outbound /><on-error /></policies>`;

const config = (policy: string) =>
  [
    'apis:',
    '  - id: a',
    '    urlSuffix: a',
    '    serviceUrl: http://127.0.0.1:1',
    `    policy: ${policy}`,
    '    operations: [{ id: get, method: GET, urlTemplate: /x }]',
    '',
  ].join('\n');

/** A generation that records which configuration made it and whether it was closed. */
interface Generation extends EngineGeneration {
  readonly label: string;
  closed: boolean;
}

function generation(label: string): Generation {
  const made: Generation = {
    label,
    closed: false,
    exchanges: () => ({ requestHeaders: () => ({ action: 'respond', status: 200, body: label }) }),
    close: async () => {
      made.closed = true;
    },
  };
  return made;
}

function waitFor(check: () => boolean): Promise<void> {
  return until(check, 'the watcher or reloader to react', { timeoutMs: 3000, everyMs: 20 });
}

describe('SwappableExchanges', () => {
  it('keeps an exchange on the generation it started with and closes a replaced generation when its last exchange ends', async () => {
    const first = generation('first');
    const swappable = new SwappableExchanges(first);
    const inFlight = swappable.exchanges();
    const second = generation('second');
    swappable.swap(second);
    expect(swappable.current).toBe(second);

    const answer = async (exchange: Exchange) =>
      (await exchange.requestHeaders({ headers: new Map(), endOfStream: true, attributes: new Map() })) as {
        body: string;
      };
    expect((await answer(inFlight)).body).toBe('first');
    expect((await answer(swappable.exchanges())).body).toBe('second');
    expect(first.closed).toBe(false);
    inFlight.end?.();
    inFlight.end?.();
    await waitFor(() => first.closed);
    expect(second.closed).toBe(false);
  });

  it('closes a replaced generation at once when nothing is in flight', async () => {
    const first = generation('first');
    const swappable = new SwappableExchanges(first);
    swappable.swap(generation('second'));
    await waitFor(() => first.closed);
  });
});

describe('ConfigReloader', () => {
  async function setUp() {
    const dir = await folder();
    const file = path.join(dir, 'gateway.yaml');
    await writeFile(path.join(dir, 'one.xml'), setHeader('one'));
    await writeFile(file, config('one.xml'));
    const build = async (configFile: string) => {
      const gateway = compileGateway(await loadConfigFile(configFile));
      return generation(String(gateway.config.apis[0]?.policy));
    };
    const swappable = new SwappableExchanges(await build(file));
    const outcomes: ReloadOutcome[] = [];
    const reloader = new ConfigReloader(file, swappable, build, (outcome) => outcomes.push(outcome), {
      watch: true,
      debounceMs: 50,
    });
    await reloader.start();
    return { dir, file, swappable, outcomes, reloader };
  }

  it('swaps in a changed configuration and watches the files the new one names', async () => {
    const { dir, file, swappable, outcomes, reloader } = await setUp();
    try {
      expect(reloader.watched()).toEqual([file, path.join(dir, 'one.xml')].sort());
      await writeFile(path.join(dir, 'two.xml'), setHeader('two'));
      await writeFile(file, config('two.xml'));
      await waitFor(() => outcomes.length === 1);
      expect(outcomes[0]).toEqual({ ok: true, generation: 2 });
      expect(swappable.current.label).toBe('two.xml');
      expect(reloader.watched()).toEqual([file, path.join(dir, 'two.xml')].sort());

      await writeFile(path.join(dir, 'two.xml'), setHeader('two again'));
      await waitFor(() => outcomes.length === 2);
      expect(outcomes[1]).toEqual({ ok: true, generation: 3 });
    } finally {
      reloader.close();
    }
  });

  it('refuses a broken policy with its file, line and column and keeps the running configuration', async () => {
    const { dir, swappable, outcomes, reloader } = await setUp();
    const running = swappable.current;
    try {
      await writeFile(
        path.join(dir, 'one.xml'),
        '<policies>\n  <inbound>\n    <rate-limit calls="abc" renewal-period="10" />\n  </inbound>\n</policies>\n',
      );
      await waitFor(() => outcomes.length === 1);
      const outcome = outcomes[0]!;
      expect(outcome.ok).toBe(false);
      expect(outcome.ok ? '' : outcome.errors).toMatch(
        new RegExp(
          `^${path.join(dir, 'one.xml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:\\d+: .*calls`,
          'm',
        ),
      );
      expect(swappable.current).toBe(running);
      expect(running.closed).toBe(false);

      // Fixing the file is noticed too: the broken file stays watched.
      await writeFile(path.join(dir, 'one.xml'), setHeader('fixed'));
      await waitFor(() => outcomes.length === 2);
      expect(outcomes[1]).toEqual({ ok: true, generation: 2 });
    } finally {
      reloader.close();
    }
  });

  it('refuses a configuration file with errors, naming file:line:col, and reloads on request', async () => {
    const { file, swappable, outcomes, reloader } = await setUp();
    reloader.close();
    const running = swappable.current;
    await writeFile(file, `${config('one.xml')}colour: red\n`);
    const refused = await reloader.reload();
    expect(refused).toEqual({ ok: false, errors: `${file}:7:1: colour: unknown key "colour"` });
    expect(swappable.current).toBe(running);
    await writeFile(file, config('one.xml'));
    expect(await reloader.reload()).toEqual({ ok: true, generation: 2 });
    expect(outcomes).toHaveLength(2);
  });
});
