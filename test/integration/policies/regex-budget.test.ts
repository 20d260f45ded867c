import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * Issue 29: RE2 never backtracks, but one search is O(input × program) and used to be stopped only between searches.
 * A policy's `(.*,){10}` over a 1 MB body of commas held the engine's only thread ~2 s, a pattern sent by the client,
 * `(.*a){50}`, over 60,000 characters ~0.5 s (over 1 Mi, 30 s), and every other API on the engine answered 504
 * meanwhile. Now the budget (maxRegexMilliseconds) stops a search while it runs: the attack gets its on-error answer,
 * and requests to another API sent while it runs are answered. How long they wait is a measure, not a behaviour: it
 * is not asserted here (it varies with the machine's load).
 *
 * The engine runs in this test's process, so the clients run in worker threads: sent from here, their own work would
 * be counted against the engine, and the engine's against them.
 */
describe('a regex search cannot hold the engine (issue 29)', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  const onError = `<return-response>
      <set-status code="500" reason="Regex budget" />
      <set-body>@(context.LastError.Message)</set-body>
    </return-response>`;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('attack', backend.url, [
        ['body', 'POST', '/body', 'body.xml'],
        ['header', 'GET', '/header', 'header.xml'],
      ])}\n${apiYaml('plain', backend.url, [['ping', 'GET', '/ping', 'plain.xml']])}\n`,
      {
        // A pattern in the policy, over the client's body. Match, not IsMatch: IsMatch needs no groups and runs on
        // re2js's DFA, which answers this one at once; Match runs the NFA, whose time grows with the program.
        'body.xml': policy({
          inbound: `
    <set-variable name="hit" value="@(Regex.Match(context.Request.Body.As&lt;string&gt;(preserveContent: true), &quot;(.*,){10}&quot;).Success)" />`,
          onError,
        }),
        // A pattern the client sends, over input the client sends.
        'header.xml': policy({
          inbound: `
    <set-variable name="hit" value="@(Regex.Match(context.Request.Headers.GetValueOrDefault(&quot;X-Input&quot;, &quot;&quot;), context.Request.Headers.GetValueOrDefault(&quot;X-Pattern&quot;, &quot;x&quot;)).Success)" />`,
          onError,
        }),
        // Answered by the engine itself: the probe measures the engine, not the test's in-process echo backend.
        'plain.xml': policy({
          inbound: `
    <return-response>
      <set-status code="200" reason="OK" />
      <set-body>@(context.Request.Method)</set-body>
    </return-response>`,
        }),
      },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  interface Attack {
    readonly path: string;
    readonly method: string;
    readonly headers: Record<string, string>;
    readonly bodyCommas: number;
  }

  const attacks: readonly [string, Attack][] = [
    [
      'a policy pattern (.*,){10} over a 1 MB body of commas',
      { path: '/attack/body', method: 'POST', headers: {}, bodyCommas: 1_000_000 },
    ],
    [
      'a client pattern (.*a){50} over a 60,000-character header',
      {
        path: '/attack/header',
        method: 'GET',
        headers: { 'X-Pattern': '(.*a){50}', 'X-Input': 'a'.repeat(60_000) },
        bodyCommas: 0,
      },
    ],
  ];

  /**
   * Sends the attack `workerData.times` times, one after the other, and while each is unanswered keeps `innocent`
   * requests to the other API in flight: rounds of that many at once, the next round as soon as one is answered (at
   * most 100 rounds an attack). Posts back each attack's answer and the status of every innocent request sent while it
   * was unanswered. One after the other: what is under test is that one search cannot hold the engine; a client
   * sending attacks back to back keeps the engine's only thread busy whatever each costs, which is for rate limits.
   */
  const CLIENT = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { url, attack, times, innocent } = workerData;
    const status = (request) =>
      request.then(async (response) => { await response.arrayBuffer(); return response.status; }, () => 0);
    (async () => {
      const rounds = [];
      for (let i = 0; i < times; i++) {
        let pending = true;
        const answer = fetch(url + attack.path, {
          method: attack.method,
          headers: attack.headers,
          body: attack.bodyCommas ? ','.repeat(attack.bodyCommas) : undefined,
          signal: AbortSignal.timeout(10000),
        }).then(
          async (response) => ({ status: response.status, body: await response.text() }),
          (error) => ({ status: 0, body: String(error) }),
        ).finally(() => { pending = false; });
        const statuses = [];
        for (let round = 0; pending && round < 100; round++) {
          const sent = Array.from({ length: innocent }, () =>
            status(fetch(url + '/plain/ping', { signal: AbortSignal.timeout(10000) })),
          );
          statuses.push(...(await Promise.all(sent)));
        }
        rounds.push({ answer: await answer, innocent: statuses });
      }
      parentPort.postMessage(rounds);
    })();
  `;

  const run = async <T>(workerData: unknown): Promise<T> => {
    const worker = new Worker(CLIENT, { eval: true, workerData });
    try {
      const [value] = (await once(worker, 'message')) as [T];
      return value;
    } finally {
      await worker.terminate();
    }
  };

  it.each(attacks)(
    '%s gets the on-error answer, and every request to another API sent meanwhile is answered 200',
    async (_name, attack) => {
      type Round = { answer: { status: number; body: string }; innocent: number[] };
      // The engine's first request of a kind pays for compiling its code paths; it is not what this test is about.
      await run<Round[]>({ url: gateway.url, attack, times: 1, innocent: 1 });

      const rounds = await run<Round[]>({ url: gateway.url, attack, times: 8, innocent: 5 });

      expect(rounds).toHaveLength(8);
      for (const { answer, innocent } of rounds) {
        // Stopped by the budget and answered by on-error. Before, the search ran to its end (0.5–3 s) and Envoy, tired
        // of waiting for the engine (its ext_proc message timeout, 500 ms in production), answered 504.
        expect(answer.status).toBe(500);
        expect(answer.body).toMatch(
          /^RegexMatchTimeoutException: regular expression searches took more than the limit of \d+ ms .* was stopped$/,
        );
        // Requests to another API, in flight for as long as the attack was: each answered by the engine (before, those
        // waiting behind a search met the same timeout and got 504).
        expect(innocent.length).toBeGreaterThanOrEqual(5);
        expect(innocent.filter((status) => status !== 200)).toEqual([]);
      }
    },
  );
});
