import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { runCli } from '../../processes/cli.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';
import { until } from '../../processes/wait.js';
import { type SharedStateStack, startSharedStateStack } from './harness.js';

const BIN = fileURLToPath(new URL('../../../bin/portcullis.js', import.meta.url));

interface PrintedEvent {
  id: string;
  time: string;
  partition?: { id?: string; key?: string };
  message: string;
}

/**
 * Two engine processes behind one Envoy with `state.dataDir` and no Redis: they open one LMDB environment (the
 * data directory, relative to the configuration file), enforce each limit as one engine would, and keep the
 * log-to-eventhub events in its streams.
 */
describe('shared state through the embedded store, two engine processes on one machine', () => {
  let backend: EchoBackend;
  let stack: SharedStateStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    stack = await startSharedStateStack(
      `
state:
  dataDir: state
  loggers:
    audit: { stream: gateway-audit, maxLength: 1000 }
apis:
${apiYaml('limited', backend.url, [['get', 'GET', '/items', 'limited.xml']])}
${apiYaml('quota', backend.url, [['get', 'GET', '/items', 'quota.xml']])}
${apiYaml('logged', backend.url, [['get', 'GET', '/items/{id}', 'logged.xml']])}
`,
      {
        'limited.xml': policy({
          inbound:
            '<rate-limit-by-key calls="10" renewal-period="60" counter-key="burst" remaining-calls-header-name="X-Remaining" />',
        }),
        'quota.xml': policy({
          inbound: '<quota-by-key calls="3" renewal-period="2592000" counter-key="monthly" />',
        }),
        'logged.xml': policy({
          inbound:
            '<log-to-eventhub logger-id="audit" partition-key="@(context.Request.MatchedParameters[&quot;id&quot;])">@(context.Request.Method + " " + context.Request.MatchedParameters["id"])</log-to-eventhub>',
        }),
      },
    );
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await backend?.close();
  });

  it('a limit of 10 per minute admits exactly 10 of 20 concurrent calls spread over both engines', async () => {
    const before = stack.engines.map((engine) => engine.requests());
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => fetch(`${stack.url}/limited/items`)),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(10);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(10);
    const remaining = responses
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers.get('x-remaining')))
      .sort((a, b) => a - b);
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // Both engines took part (their access lines reach the log within 50 ms: src/log.ts gathers them).
    await until(
      () => stack.engines.every((engine, i) => engine.requests() > before[i]!),
      'an access line from each engine',
    );
  });

  it('a quota of 3 admits exactly 3 of 12 concurrent calls, then 403', async () => {
    const responses = await Promise.all(Array.from({ length: 12 }, () => fetch(`${stack.url}/quota/items`)));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(3);
    expect(responses.filter((r) => r.status === 403)).toHaveLength(9);
  });

  /** `portcullis events` on the stack's configuration: the printed events. */
  async function printedEvents(...args: string[]): Promise<PrintedEvent[]> {
    const outcome = await runCli(['events', '--config', stack.configFile, '--logger', 'audit', ...args]);
    expect(outcome.stderr).toBe('');
    expect(outcome.status).toBe(0);
    return outcome.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as PrintedEvent);
  }

  it('log-to-eventhub events of both engines are kept across their restart and read back by `portcullis events`', async () => {
    for (let i = 1; i <= 4; i++) expect((await fetch(`${stack.url}/logged/items/${i}`)).status).toBe(200);
    // SIGTERM at once: what an engine still holds is written as it stops. Both together (each waits out its
    // 5 s drain: Envoy keeps its idle connections open).
    await Promise.all([stack.restartEngine(0), stack.restartEngine(1)]);
    for (let i = 5; i <= 6; i++)
      await until(
        async () => (await fetch(`${stack.url}/logged/items/${i}`)).status === 200,
        'a logged request through a restarted engine',
        { timeoutMs: 10_000, everyMs: 100 },
      );
    let events: PrintedEvent[] = [];
    await until(
      async () => {
        events = await printedEvents();
        return events.some((event) => event.message === 'GET 6');
      },
      'the events after the restart',
      { timeoutMs: 15_000, everyMs: 200 },
    );
    // The events of before the restart come first (two engines write each its own: in either order), then
    // those after it.
    const messages = events.map((event) => event.message);
    expect(messages.slice(0, 4).sort()).toEqual(['GET 1', 'GET 2', 'GET 3', 'GET 4']);
    expect(messages.slice(4).sort()).toEqual(['GET 5', 'GET 6']);
    expect(events[0]).toMatchObject({ partition: { key: '1' } });
    expect(Date.parse(events[0]!.time)).toBe(Number(events[0]!.id.split('-')[0]));

    const since = await printedEvents('--since', events[3]!.id);
    expect(since.map((event) => event.id)).toEqual(events.slice(4).map((event) => event.id));
  }, 60_000);

  it('`portcullis events --follow` prints new events as they come and stops on SIGINT', async () => {
    const child: ChildProcess = spawn(
      process.execPath,
      [BIN, 'events', '--config', stack.configFile, '--logger', 'audit', '--follow'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await until(() => output.includes('"GET 6"'), 'the retained events', {
        timeoutMs: 15_000,
        detail: () => output,
      });
      expect((await fetch(`${stack.url}/logged/items/followed`)).status).toBe(200);
      await until(() => output.includes('"GET followed"'), 'the new event', {
        timeoutMs: 10_000,
        detail: () => output,
      });
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  }, 60_000);
});
