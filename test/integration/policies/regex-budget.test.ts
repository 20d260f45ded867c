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
 * and requests to another API keep being answered in time while the attack repeats.
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
   * Sends the attack `workerData.times` times, 250 ms apart, and posts back each answer's status and body. Apart: what
   * is under test is how long one request can hold the engine; a client sending them back to back keeps the engine's
   * only thread busy whatever each costs, which is for rate limits to stop.
   */
  const ATTACKER = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { url, attack, times } = workerData;
    (async () => {
      const answers = [];
      for (let i = 0; i < times; i++) {
        const response = await fetch(url + attack.path, {
          method: attack.method,
          headers: attack.headers,
          body: attack.bodyCommas ? ','.repeat(attack.bodyCommas) : undefined,
          signal: AbortSignal.timeout(10000),
        }).catch(() => null);
        answers.push({ status: response?.status ?? 0, body: response ? await response.text() : '' });
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      parentPort.postMessage(answers);
    })();
  `;

  /** Requests to the other API every 10 ms (at most 150) until told to stop; posts back each status and duration. */
  const PROBER = `
    const { parentPort, workerData } = require('node:worker_threads');
    const probes = [];
    let stopped = false;
    parentPort.on('message', () => { stopped = true; });
    const probe = async () => {
      const began = performance.now();
      try {
        const response = await fetch(workerData.url, { signal: AbortSignal.timeout(10000) });
        await response.arrayBuffer();
        return { status: response.status, ms: performance.now() - began };
      } catch {
        return { status: 0, ms: performance.now() - began };
      }
    };
    (async () => {
      // The first requests of a new client pay for connecting and compiling; they are not what is measured.
      for (let i = 0; i < 5; i++) await probe();
      parentPort.postMessage('ready');
      while (!stopped && probes.length < 150) {
        probes.push(probe());
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      parentPort.postMessage(await Promise.all(probes));
    })();
  `;

  const run = async <T>(code: string, workerData: unknown, untilReady = false) => {
    const worker = new Worker(code, { eval: true, workerData });
    if (untilReady) await once(worker, 'message');
    return {
      worker,
      result: async (): Promise<T> => {
        const [value] = (await once(worker, 'message')) as [T];
        await worker.terminate();
        return value;
      },
    };
  };

  it.each(attacks)(
    '%s gets the on-error answer while another API keeps answering 200 in time',
    async (_name, attack) => {
      type Answer = { status: number; body: string };
      // The engine's first request of a kind pays for compiling its code paths; it is not what this test measures.
      const warm = await run<Answer[]>(ATTACKER, { url: gateway.url, attack, times: 1 });
      await warm.result();

      const prober = await run<{ status: number; ms: number }[]>(
        PROBER,
        { url: `${gateway.url}/plain/ping` },
        true,
      );
      const attacker = await run<Answer[]>(ATTACKER, { url: gateway.url, attack, times: 8 });
      const answers = await attacker.result();
      prober.worker.postMessage('stop');
      const probes = await prober.result();

      expect(probes.length).toBeGreaterThanOrEqual(20);
      expect(probes.filter((p) => p.status !== 200)).toEqual([]);
      const sorted = probes.map((p) => p.ms).sort((a, b) => a - b);
      const p99 = sorted[Math.ceil(sorted.length * 0.99) - 1]!;
      // Envoy waits 500 ms for each ext_proc message in production: a probe must stay inside it. One attack holds the
      // engine for the budget (100 ms) plus its own handling (a 1 MB body: tens of ms), and a probe can wait behind
      // two of them; p99 is 130–180 ms on a quiet machine and up to 300 ms while other test files start gateways on
      // the same cores. Before, each attack held the engine 0.5–3 s and the probes timed out (504).
      expect(p99).toBeLessThan(400);

      expect(answers).toHaveLength(8);
      for (const answer of answers) {
        expect(answer.status).toBe(500);
        expect(answer.body).toMatch(
          /^RegexMatchTimeoutException: regular expression searches took more than the limit of \d+ ms .* was stopped$/,
        );
      }
    },
  );
});
