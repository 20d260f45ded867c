import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { runCli } from '../../processes/cli.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * `--backend-routing envoy-route`: the engine behind an Envoy that routes each API by its own route and never
 * follows the engine's routing header (Envoy Gateway, Istio, an operator's Envoy without `engine_selected_backend`
 * — here the generated bootstrap with that route taken out). A `set-backend-service` choice of another backend
 * would be lost there without a word; the engine refuses it instead, at load when the choice is literal and per
 * request when an expression computes it, and still forwards a choice of the API's own backend.
 */

/** The generated bootstrap without the route that follows the engine's routing header: Envoy's own routes only. */
function withoutEngineRouting(generated: Record<string, unknown>): Record<string, unknown> {
  const text = JSON.stringify(generated);
  const pruned = JSON.parse(text, (_key, value: unknown) =>
    Array.isArray(value)
      ? value.filter(
          (item) =>
            !(
              typeof item === 'object' &&
              item !== null &&
              (item as { name?: string }).name === 'engine_selected_backend'
            ),
        )
      : value,
  ) as Record<string, unknown>;
  expect(JSON.stringify(pruned)).not.toContain('engine_selected_backend');
  return pruned;
}

const chooseByHeader = policy({
  inbound:
    '<set-backend-service base-url="@(context.Request.Headers.GetValueOrDefault(&quot;X-Target&quot;, &quot;&quot;))" />',
});

describe('the engine behind an Envoy that routes by its own routes', () => {
  let own: EchoBackend;
  let other: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    own = await startEchoBackend();
    other = await startEchoBackend();
    gateway = await startGateway(
      `backends: [{ id: other, url: "${other.url}" }]\napis:\n${apiYaml('routed', own.url, [
        ['choose', 'GET', '/choose', 'choose.xml'],
      ])}\n`,
      { 'choose.xml': chooseByHeader },
      { backendRouting: 'envoy-route' },
      withoutEngineRouting,
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await own?.close();
    await other?.close();
  });

  it('refuses with a 500 a request whose policies chose another backend: neither backend is called', async () => {
    const before = { own: own.received.length, other: other.received.length };
    const response = await fetch(`${gateway.url}/routed/choose`, {
      headers: { 'X-Target': `${other.url}/v2` },
    });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ statusCode: 500, message: 'Internal server error' });
    expect(own.received.length).toBe(before.own);
    expect(other.received.length).toBe(before.other);
  });

  it("forwards a choice of the API's own backend, with the path the choice gives, to Envoy's own route", async () => {
    const response = await fetch(`${gateway.url}/routed/choose?x=1`, {
      headers: { 'X-Target': `${own.url}/v2` },
    });
    expect(response.status).toBe(200);
    expect(own.received.at(-1)?.url).toBe('/v2/choose?x=1');
  });

  it('ignores a routing header the client sent: the request still goes where Envoy routes it', async () => {
    const response = await fetch(`${gateway.url}/routed/choose`, {
      headers: { 'X-Target': own.url, 'x-portcullis-backend': 'backend_other' },
    });
    expect(response.status).toBe(200);
    expect(own.received.at(-1)?.headers['x-portcullis-backend']).toBeUndefined();
  });
});

describe('a configuration whose policies literally choose another backend', () => {
  const files = {
    'other.xml': policy({ inbound: '<set-backend-service backend-id="other" />' }),
    'own.xml': policy({ inbound: '<set-backend-service base-url="http://127.0.0.1:9/v2" />' }),
  };
  const configYaml = `backends: [{ id: other, url: "http://127.0.0.1:8" }]\napis:\n${apiYaml(
    'routed',
    'http://127.0.0.1:9',
    [
      ['other', 'GET', '/other', 'other.xml'],
      ['own', 'GET', '/own', 'own.xml'],
    ],
  )}\n`;

  it('is refused by `portcullis engine --backend-routing envoy-route`, naming file:line:col of the element', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-envoy-route-'));
    for (const [name, text] of Object.entries(files)) await writeFile(path.join(directory, name), text);
    await writeFile(path.join(directory, 'gateway.yaml'), configYaml);
    const outcome = await runCli([
      'engine',
      '--backend-routing',
      'envoy-route',
      '--port',
      '0',
      '--config',
      path.join(directory, 'gateway.yaml'),
    ]);
    expect(outcome.status).not.toBe(0);
    const lines = outcome.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /other\.xml:4:5: <set-backend-service> chooses backend "other" \(http:\/\/127\.0\.0\.1:8\), but the Envoy in front routes by its own routes \(--backend-routing envoy-route\) and sends API "routed" to http:\/\/127\.0\.0\.1:9 \(API routed, operation other\)$/,
    );
  });

  it('is refused with a usage error for a routing the engine does not know', async () => {
    const outcome = await runCli(['engine', '--backend-routing', 'header', '--port', '0']);
    expect(outcome.status).not.toBe(0);
    expect(outcome.stderr).toContain('--backend-routing must be one of engine, envoy-route, got "header"');
  });
});
