import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { runCli } from '../../processes/cli.js';
import { type GatewayStack, startGatewayForFile } from '../../processes/gateway.js';

const sample = fileURLToPath(new URL('../../fixtures/apiops/sample-artifacts', import.meta.url));
const subscriptionKey = 'apiops-subscription-1-primary-key';
const apiSubscriptionKey = 'apiops-subscription-2-primary-key';
/** The value API Management would have read from Key Vault, which the operator provides in the environment. */
const environment = { NAMED_VALUE_ENVIRONMENT_NAME: 'from-key-vault' };

/** Every file under `root` (relative path → text), the gateway file left out. */
function filesUnder(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    const relative = path.relative(root, full);
    if (relative !== 'gateway.yaml') files[relative] = readFileSync(full, 'utf8');
  }
  return files;
}

const configOf = (file: string) => parseConfig(readFileSync(file, 'utf8'), 'gateway.yaml');

/**
 * The Azure/apiops sample instance brought over with the CLI, as an operator would for an environment of their own:
 * an overrides file points the backends at a local one, gives a subscription its keys and moves a named value to
 * Key Vault. The sample's global ip-filter allows 10.0.0.1; the copy allows the test machine instead.
 */
describe('portcullis import apiops / export apiops on the Azure/apiops sample', () => {
  let work: string;
  let backend: EchoBackend;
  let gateway: GatewayStack | undefined;
  let imported: string;

  beforeAll(async () => {
    backend = await startEchoBackend();
    work = mkdtempSync(path.join(tmpdir(), 'portcullis-apiops-'));
    const artifacts = path.join(work, 'artifacts');
    cpSync(sample, artifacts, { recursive: true });
    const global = path.join(artifacts, 'policy.xml');
    writeFileSync(
      global,
      readFileSync(global, 'utf8').replace('<address>10.0.0.1</address>', '<address>127.0.0.1</address>'),
    );
    writeFileSync(
      path.join(work, 'configuration.test.yaml'),
      `namedValues:
  - name: environment-name
    properties:
      keyVault: { secretIdentifier: "https://vault.example/secrets/environment-name" }
backends:
  - name: backend1
    properties: { url: "${backend.url}" }
apis:
  - name: basic-api
    properties: { serviceUrl: "${backend.url}" }
  - name: versioned-api-v1
    properties: { serviceUrl: "${backend.url}" }
subscriptions:
  - name: subscription1
    properties: { primaryKey: ${subscriptionKey} }
  - name: subscription2
    properties: { primaryKey: ${apiSubscriptionKey}, scope: /apis/versioned-api-v1 }
`,
    );
    imported = path.join(work, 'imported', 'gateway.yaml');
    const outcome = await runCli(
      [
        'import',
        'apiops',
        artifacts,
        '--config',
        imported,
        '--overrides',
        path.join(work, 'configuration.test.yaml'),
      ],
      { env: environment },
    );
    expect(outcome.stderr).toContain('not carried over (');
    expect(outcome.stderr).toContain(
      'named values/environment-name/namedValueInformation.json: set NAMED_VALUE_ENVIRONMENT_NAME to the Key Vault secret https://vault.example/secrets/environment-name',
    );
    expect(outcome.stdout).toMatch(/wrote .*gateway\.yaml: 7 APIs, 2 products, 2 backends/);
    expect(outcome.status).toBe(0);
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
    for (const name of Object.keys(environment)) delete process.env[name];
    rmSync(work, { recursive: true, force: true });
  });

  it('writes a configuration that validates once the Key Vault value is in the environment', async () => {
    const valid = await runCli(['validate', imported], { env: environment });
    expect(valid.stderr).toBe('');
    expect(valid.status).toBe(0);
    const unset = await runCli(['validate', imported]);
    expect(unset.status).toBe(1);
    expect(unset.stdout).toMatch(
      /gateway\.yaml:\d+:\d+: namedValues\.environment-name\.env: environment variable NAMED_VALUE_ENVIRONMENT_NAME is not set \(API Management read it from Key Vault: https:\/\/vault\.example\/secrets\/environment-name\)/,
    );
  });

  it('import → export → import gives the same configuration, policies and specifications', async () => {
    // With an MCP server API besides the sample's (API Management's type mcp: a base URL and its mcp endpoint).
    const source = path.join(path.dirname(imported), 'gateway-with-mcp.yaml');
    writeFileSync(
      source,
      readFileSync(imported, 'utf8').replace(
        /^apis:\n/m,
        'apis:\n  - { id: zz-weather, name: Weather MCP, type: mcp, urlSuffix: weather, serviceUrl: "https://mcp.weather.example/mcp", subscriptionRequired: false }\n',
      ),
    );
    expect(configOf(source).apis.some((api) => api.type === 'mcp')).toBe(true);
    const exported = path.join(work, 'exported');
    const secrets = path.join(work, 'configuration.secrets.yaml');
    const out = await runCli(['export', 'apiops', exported, '--config', source, '--secrets', secrets]);
    expect(
      JSON.parse(readFileSync(path.join(exported, 'apis/zz-weather/apiInformation.json'), 'utf8')),
    ).toMatchObject({
      properties: {
        type: 'mcp',
        serviceUrl: 'https://mcp.weather.example',
        mcpProperties: { transportType: 'streamable', endpoints: { mcp: { uriTemplate: '/mcp' } } },
      },
    });
    expect(out.status).toBe(0);
    expect(
      readFileSync(path.join(exported, 'apis/basic-api/operations/get-items/policy.xml'), 'utf8'),
    ).toContain('<set-query-parameter name="source"');
    // The key went to the secrets file only.
    expect(Object.values(filesUnder(exported)).join('\n')).not.toContain(subscriptionKey);
    expect(readFileSync(secrets, 'utf8')).toContain(subscriptionKey);

    const again = path.join(work, 'again', 'gateway.yaml');
    const back = await runCli(['import', 'apiops', exported, '--config', again, '--overrides', secrets], {
      env: environment,
    });
    expect(back.status).toBe(0);
    // The MCP API comes back where its folder sorts, after the sample's.
    const expected = configOf(source);
    expect(configOf(again)).toEqual({
      ...expected,
      apis: [
        ...expected.apis.filter((api) => api.type !== 'mcp'),
        expected.apis.find((api) => api.type === 'mcp'),
      ],
    });
    const { 'gateway-with-mcp.yaml': _, ...importedFiles } = filesUnder(path.dirname(imported));
    expect(filesUnder(path.dirname(again))).toEqual(importedFiles);

    // And the artifacts the second configuration exports are the first export, file for file.
    const exportedAgain = path.join(work, 'exported-again');
    expect((await runCli(['export', 'apiops', exportedAgain, '--config', again])).status).toBe(0);
    expect(filesUnder(exportedAgain)).toEqual(filesUnder(exported));
  });

  it('serves the imported APIs through Envoy with their global, product, API and operation policies', async () => {
    Object.assign(process.env, environment);
    gateway = await startGatewayForFile(imported);
    const key = (value: string) => ({ headers: { 'Ocp-Apim-Subscription-Key': value } });

    expect((await fetch(`${gateway.url}/versioned-api/v1/version`)).status).toBe(401);

    // A subscription to the API itself: no product policy; the API and its operation have none, so the global
    // policy runs, with its fragment (policyFragment1) and the named value read from the variable for Key Vault.
    const global = await fetch(`${gateway.url}/versioned-api/v1/version`, key(apiSubscriptionKey));
    expect(global.status).toBe(200);
    expect(global.headers.get('x-response-source')).toBe('from-key-vault');
    let seen = backend.received.at(-1)!;
    expect(seen.url).toBe('/version');
    expect(seen.headers['x-sample-environment']).toBe('from-key-vault');
    expect(seen.headers['x-allowed-client']).toBe('10.0.0.1');
    expect(seen.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.headers['x-product']).toBeUndefined();

    // Through product1, whose policy has no <base />: in API Management it replaces the global one, and here too.
    const product = await fetch(`${gateway.url}/versioned-api/v1/version`, key(subscriptionKey));
    expect(product.status).toBe(200);
    seen = backend.received.at(-1)!;
    expect(seen.headers['x-product']).toBe('product1');
    expect(seen.headers['x-sample-environment']).toBeUndefined();
    expect(product.headers.get('x-response-source')).toBeNull();

    // The operation's own policy (no <base /> either): only it runs.
    const items = await fetch(`${gateway.url}/basic-api/items`, key(subscriptionKey));
    expect(items.status).toBe(200);
    seen = backend.received.at(-1)!;
    expect(seen.url).toBe('/items?source=get-items');
    expect(seen.headers['x-api']).toBeUndefined();
    expect(seen.headers['x-product']).toBeUndefined();
  });
});
