import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { freePort } from '../../src/config/plan.js';
import { startUp, type UpRun } from '../processes/up.js';
import { until } from '../processes/wait.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const exampleDir = path.join(root, 'examples', 'llm');

/**
 * The AI gateway example (examples/llm) under `portcullis up`, unchanged but for its ports: three OpenAI-compatible
 * deployments in a pool (https://learn.microsoft.com/azure/api-management/backends#load-balanced-pool), the
 * priority-1 one answering 429 with Retry-After after 5 calls, with llm-token-limit counting every call. Every
 * request is answered 200: the 429 trips its circuit breaker, the retry goes to priority 2, and priority 1 takes the
 * requests again once its Retry-After has passed.
 */
describe('the AI gateway example: a pool with failover', { timeout: 90_000 }, () => {
  let run: UpRun;
  let gatewayUrl: string;

  beforeAll(async () => {
    const config = parse(await readFile(path.join(exampleDir, 'gateway.yaml'), 'utf8'));
    const gatewayPort = await freePort();
    config.gateway = { http: { host: '127.0.0.1', port: gatewayPort } };
    config.admin = { host: '127.0.0.1', port: await freePort() };
    config.engine = { ...config.engine, metricsPort: await freePort() };
    for (const api of config.apis) api.policy = path.join(exampleDir, api.policy);
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-llm-pool-'));
    config.state.dataDir = path.join(directory, 'state');
    // Each deployment on a port of its own, the backend entities and the companion processes moved with it.
    const moved = new Map<string, string>();
    for (const companion of config.processes) {
      const port = String(await freePort());
      moved.set(`http://127.0.0.1:${companion.env.PORT}/v1`, `http://127.0.0.1:${port}/v1`);
      companion.cwd = exampleDir;
      companion.env = {
        ...companion.env,
        PORT: port,
        ...(companion.env.RETRY_AFTER ? { RETRY_AFTER: '5' } : {}),
      };
      companion.readyUrl = `http://127.0.0.1:${port}/healthz`;
    }
    for (const backend of config.backends)
      if (backend.url) backend.url = moved.get(backend.url) ?? backend.url;
    for (const api of config.apis) api.serviceUrl = moved.get(api.serviceUrl) ?? api.serviceUrl;
    const file = path.join(directory, 'gateway.yaml');
    await writeFile(file, stringify(config));
    run = startUp(file);
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    await until(
      () =>
        fetch(`${gatewayUrl}/llm/chat/completions`, { method: 'POST', body: '{}' })
          .then((response) => response.status !== 503 && response.status !== 404)
          .catch(() => false),
      'the gateway to serve the LLM API',
      { timeoutMs: 60_000, everyMs: 200, detail: () => run.output() },
    );
  });

  afterAll(async () => {
    await run?.stop(15_000);
  });

  const chat = async () => {
    const response = await fetch(`${gatewayUrl}/llm/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-client': 'pool-test' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    const body = (await response.json()) as { choices?: unknown[] };
    return {
      status: response.status,
      backend: response.headers.get('x-backend'),
      consumed: Number(response.headers.get('x-tokens-consumed')),
      remaining: Number(response.headers.get('x-ratelimit-remaining-tokens')),
      answered: Array.isArray(body.choices) && body.choices.length === 1,
    };
  };

  it('fails over on 429, comes back after Retry-After, and loses no request, with tokens counted', async () => {
    // The probe above may have been a call; start from the primary's next refusal.
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await chat());
    expect(answers.every((answer) => answer.status === 200 && answer.answered)).toBe(true);
    const firstFailover = answers.findIndex((answer) => answer.backend !== 'primary');
    expect(firstFailover).toBeGreaterThanOrEqual(0);
    expect(answers.slice(0, firstFailover).every((answer) => answer.backend === 'primary')).toBe(true);
    // While the primary is tripped (5 s), priority 2 takes every request, both its deployments in turn.
    const during = answers.slice(firstFailover).map((answer) => answer.backend);
    expect(during).not.toContain('primary');
    expect(new Set(during)).toEqual(new Set(['secondary-a', 'secondary-b']));
    // llm-token-limit counted every answered call, whichever deployment gave it.
    expect(answers.every((answer) => answer.consumed > 0)).toBe(true);
    for (let i = 1; i < answers.length; i++)
      expect(answers[i]!.remaining).toBeLessThan(answers[i - 1]!.remaining);

    // After the Retry-After the primary is back.
    await until(
      async () => (await chat()).backend === 'primary',
      'the primary back after its Retry-After',
      15_000,
    );
  });
});
