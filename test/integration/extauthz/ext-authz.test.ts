import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { runCli } from '../../processes/cli.js';
import { type GatewayStack, startEngine, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * The engine's ext_authz variant behind a real Envoy whose ext_authz filter stands where ext_proc would: what the
 * header-only policies' own tests (run over both transports) do not show — that Envoy really asked ext_authz, the
 * request-header changes and refusals it carries, and the refusal at load of a pipeline that needs ext_proc.
 */
describe('the engine over ext_authz', () => {
  let backend: EchoBackend;
  let gateway: GatewayStack;

  beforeAll(async () => {
    backend = await startEchoBackend();
    gateway = await startGateway(
      `apis:\n${apiYaml('az', backend.url, [
        ['headers', 'GET', '/headers', 'headers.xml'],
        ['teapot', 'GET', '/teapot', 'teapot.xml'],
        ['limited', 'GET', '/limited', 'limited.xml'],
      ])}\n`,
      {
        'headers.xml': policy({
          inbound: `
    <set-header name="X-Added" exists-action="override"><value>added</value></set-header>
    <set-header name="X-Kept" exists-action="skip"><value>default</value></set-header>
    <set-header name="X-Listed" exists-action="append"><value>two</value></set-header>
    <set-header name="X-Secret" exists-action="delete" />`,
        }),
        'teapot.xml': policy({
          inbound: `
    <return-response>
      <set-status code="418" reason="I'm a teapot" />
      <set-header name="Content-Type" exists-action="override"><value>application/json</value></set-header>
      <set-header name="X-Answer" exists-action="override"><value>first</value><value>second</value></set-header>
      <set-body>{"brewed":false}</set-body>
    </return-response>`,
        }),
        'limited.xml': policy({
          inbound:
            '<rate-limit-by-key calls="2" renewal-period="60" counter-key="@(context.Request.IpAddress)" retry-after-header-name="Retry-After" />',
        }),
      },
      {},
      undefined,
      'ext_authz',
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
  });

  it("is called through Envoy's ext_authz filter: allowed requests count as ok, refusals as denied", async () => {
    const before = await gateway.envoy.stats('ext_authz');
    await fetch(`${gateway.url}/az/headers`);
    await fetch(`${gateway.url}/az/teapot`);
    const after = await gateway.envoy.stats('ext_authz');
    const grew = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    expect(grew('http.ingress_http.ext_authz.ok')).toBe(1);
    expect(grew('http.ingress_http.ext_authz.denied')).toBe(1);
  });

  it('changes the request headers as set-header says, and strips internal headers a client sent', async () => {
    const response = await fetch(`${gateway.url}/az/headers`, {
      headers: {
        'X-Kept': 'client',
        'X-Listed': 'one',
        'X-Secret': 'hunter2',
        'X-Portcullis-Trace-Id': 'forged',
      },
    });
    expect(response.status).toBe(200);
    const seen = backend.received.at(-1)!.headers;
    expect(seen['x-added']).toBe('added');
    expect(seen['x-kept']).toBe('client');
    // Envoy's ext_authz appends a value to the header's line ("one,two"), where ext_proc adds a line: the same header.
    expect(seen['x-listed']).toMatch(/^one, ?two$/);
    expect(seen['x-secret']).toBeUndefined();
    expect(seen['x-portcullis-trace-id']).toBeUndefined();
    // The engine names the request when the client did not.
    expect(seen['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers return-response itself: status, every header value and body; the backend is not called', async () => {
    const before = backend.received.length;
    const response = await fetch(`${gateway.url}/az/teapot`);
    expect(response.status).toBe(418);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('x-answer')).toMatch(/^first, ?second$/);
    expect(await response.json()).toEqual({ brewed: false });
    expect(backend.received.length).toBe(before);
  });

  it('refuses the call over the rate limit with 429 and Retry-After', async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let call = 0; call < 3; call++) {
      last = await fetch(`${gateway.url}/az/limited`);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('a configuration ext_authz cannot serve', () => {
  const operationPolicy = [
    '<policies>',
    '  <inbound>',
    '    <base />',
    '    <check-header name="X-Client" failed-check-httpcode="401" failed-check-error-message="no" ignore-case="false"><value>a</value></check-header>',
    '    <set-body>{"replaced":true}</set-body>',
    '  </inbound>',
    '  <backend><base /></backend>',
    '  <outbound>',
    '    <base />',
    '    <set-header name="X-Out" exists-action="override"><value>1</value></set-header>',
    '  </outbound>',
    '  <on-error><base /></on-error>',
    '</policies>',
  ].join('\n');
  const configYaml = `apis:\n${apiYaml('no', 'http://127.0.0.1:9', [['get', 'GET', '/x', 'op.xml']])}\n`;

  it('is refused at load, naming file:line:col of each element that needs ext_proc', async () => {
    const failure = await startEngine(
      configYaml,
      { 'op.xml': operationPolicy },
      {},
      undefined,
      'ext_authz',
    ).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.name).toBe('NeedsExtProcError');
    const lines = failure!.message.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /op\.xml:5:5: <set-body> in inbound needs ext_proc: it replaces the request body, which ext_authz cannot change \(API no, operation get\)$/,
    );
    expect(lines[1]).toMatch(
      /op\.xml:10:5: <set-header> in outbound needs ext_proc: outbound runs on the backend's response, which ext_authz never sees/,
    );
  });

  it('refuses an MCP server API with a tool filter, which reads the JSON-RPC bodies', async () => {
    const mcpYaml = `apis:
  - { id: weather, type: mcp, urlSuffix: weather, serviceUrl: "http://127.0.0.1:9/mcp", mcp: { tools: ["get_*"] } }
  - { id: open, type: mcp, urlSuffix: open, serviceUrl: "http://127.0.0.1:9/mcp" }
`;
    const failure = await startEngine(mcpYaml, {}, {}, undefined, 'ext_authz').then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.name).toBe('NeedsExtProcError');
    expect(failure!.message.split('\n')).toEqual([
      expect.stringMatching(
        /gateway\.yaml: apis\[0\]\.mcp\.tools: API "weather" is an MCP server with a tool filter, which reads the JSON-RPC bodies: it needs ext_proc$/,
      ),
    ]);
  });

  it('refuses an MCP server API in a product behind the authorization server, whose write rule reads the bodies', async () => {
    const mcpYaml = `apis:
  - { id: weather, type: mcp, urlSuffix: weather, serviceUrl: "http://127.0.0.1:9/mcp" }
  - { id: loose, type: mcp, urlSuffix: loose, serviceUrl: "http://127.0.0.1:9/mcp" }
products: [{ id: tools, apis: [weather] }]
auth: { issuer: "http://127.0.0.1:8080", baseUrl: "http://127.0.0.1:8080", dataDir: auth-data }
`;
    const failure = await startEngine(mcpYaml, {}, {}, undefined, 'ext_authz').then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.name).toBe('NeedsExtProcError');
    expect(failure!.message.split('\n')).toEqual([
      expect.stringMatching(
        /gateway\.yaml: apis\[0\]: API "weather" is an MCP server behind the authorization server, whose write rule \(mcp\.writeTools\) reads the JSON-RPC bodies: it needs ext_proc$/,
      ),
    ]);
  });

  it('is refused by `portcullis engine --authz`, which exits with the same lines', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-authz-'));
    await writeFile(path.join(directory, 'op.xml'), operationPolicy);
    await writeFile(path.join(directory, 'gateway.yaml'), configYaml);
    const outcome = await runCli([
      'engine',
      '--authz',
      '--port',
      '0',
      '--config',
      path.join(directory, 'gateway.yaml'),
    ]);
    expect(outcome.status).not.toBe(0);
    expect(outcome.stderr).toContain('op.xml:5:5: <set-body> in inbound needs ext_proc');
    expect(outcome.stderr).toContain('op.xml:10:5: <set-header> in outbound needs ext_proc');
  });
});
