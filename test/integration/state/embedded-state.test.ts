import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../helpers/backend.js';
import { apiYaml, policy } from '../policies/support.js';
import { type SharedStateStack, startSharedStateStack } from './harness.js';

/**
 * Two engine processes behind one Envoy with `state.dataDir` and no Redis: they open one LMDB environment (the
 * data directory, relative to the configuration file) and enforce each limit as one engine would.
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
apis:
${apiYaml('limited', backend.url, [['get', 'GET', '/items', 'limited.xml']])}
${apiYaml('quota', backend.url, [['get', 'GET', '/items', 'quota.xml']])}
`,
      {
        'limited.xml': policy({
          inbound:
            '<rate-limit-by-key calls="10" renewal-period="60" counter-key="burst" remaining-calls-header-name="X-Remaining" />',
        }),
        'quota.xml': policy({
          inbound: '<quota-by-key calls="3" renewal-period="2592000" counter-key="monthly" />',
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
    // Both engines took part.
    stack.engines.forEach((engine, i) => {
      expect(engine.requests()).toBeGreaterThan(before[i]!);
    });
  });

  it('a quota of 3 admits exactly 3 of 12 concurrent calls, then 403', async () => {
    const responses = await Promise.all(Array.from({ length: 12 }, () => fetch(`${stack.url}/quota/items`)));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(3);
    expect(responses.filter((r) => r.status === 403)).toHaveLength(9);
  });
});
