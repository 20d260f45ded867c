import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import { runCli } from '../../processes/cli.js';

/**
 * Issue #34, item 4: `import apiops DIR --overrides configuration.prod.yaml`, then `export apiops DIR` over the same
 * folder. The base artifacts must keep their own (lowest environment's) values, prod's go into the overrides file
 * as APIOps keeps them, and nothing the folder held that the gateway does not model is lost.
 */

const sample = fileURLToPath(new URL('../../fixtures/apiops/sample-artifacts', import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), 'portcullis-export-over-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function filesUnder(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const full = path.join(entry.parentPath, entry.name);
      files[path.relative(root, full)] = readFileSync(full, 'utf8');
    }
  }
  return files;
}

const json = (file: string) => JSON.parse(readFileSync(file, 'utf8')).properties;
const configOf = (file: string) => parseConfig(readFileSync(file, 'utf8'), 'gateway.yaml');

describe('export apiops over the folder the configuration was imported from', () => {
  const artifacts = path.join(work, 'artifacts');
  const prod = path.join(work, 'configuration.prod.yaml');
  const config = path.join(work, 'gateway', 'gateway.yaml');
  cpSync(sample, artifacts, { recursive: true });
  writeFileSync(
    prod,
    `apimServiceName: apim-prod
namedValues:
  - name: environment-name
    properties: { value: production }
backends:
  - name: backend1
    properties: { url: "https://backend.prod.example" }
apis:
  - name: basic-api
    properties: { serviceUrl: "https://prod.example" }
loggers:
  - name: azuremonitor
    properties: { description: prod monitor }
`,
  );

  it('refuses without an overrides file, writing nothing; with one, keeps the base values and what the gateway does not model', async () => {
    const imported = await runCli(['import', 'apiops', artifacts, '--config', config, '--overrides', prod]);
    expect(imported.status, imported.stderr).toBe(0);
    const prodConfig = configOf(config);
    expect(prodConfig.apis.find((api) => api.id === 'basic-api')?.serviceUrl).toBe('https://prod.example');
    const before = filesUnder(artifacts);

    const refused = await runCli(['export', 'apiops', artifacts, '--config', config]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('nothing written: these values differ from the artifacts in');
    expect(refused.stderr).toContain('give --overrides configuration.<env>.yaml');
    expect(refused.stderr).toContain('apis/basic-api: serviceUrl');
    expect(refused.stderr).toContain('backends/backend1: url');
    expect(refused.stderr).toContain('namedValues/environment-name: value');
    expect(filesUnder(artifacts)).toEqual(before);

    const exported = await runCli(['export', 'apiops', artifacts, '--config', config, '--overrides', prod]);
    expect(exported.status, exported.stderr).toBe(0);
    expect(exported.stdout).toMatch(
      /kept from .*artifacts \(not modelled by the gateway\): products\/product1\/productInformation\.json: .*terms/,
    );
    const after = filesUnder(artifacts);
    // Every file the folder held is still there.
    expect(Object.keys(after)).toEqual(expect.arrayContaining(Object.keys(before)));
    // The base artifacts keep the lowest environment's values.
    expect(json(path.join(artifacts, 'apis/basic-api/apiInformation.json'))).toMatchObject({
      serviceUrl: 'https://httpbin.org',
      description: 'Basic OpenAPI YAML API with operation policies.',
      authenticationSettings: {},
    });
    expect(json(path.join(artifacts, 'backends/backend1/backendInformation.json'))).toMatchObject({
      url: 'https://httpbin.org',
      description: 'HTTPBin backend for scenario APIs.',
    });
    expect(json(path.join(artifacts, 'named values/environment-name/namedValueInformation.json'))).toEqual({
      displayName: 'environment-name',
      secret: false,
      tags: ['environment'],
      value: 'scenario',
    });
    // Products keep their terms and limits, which the gateway does not model.
    expect(json(path.join(artifacts, 'products/product1/productInformation.json'))).toMatchObject({
      terms: 'Sample terms for product1.',
      subscriptionsLimit: 10,
      approvalRequired: false,
    });
    // Prod's values are in the overrides file, beside what it held already.
    const overrides = parse(readFileSync(prod, 'utf8'));
    expect(overrides.apimServiceName).toBe('apim-prod');
    expect(overrides.loggers).toEqual([
      { name: 'azuremonitor', properties: { description: 'prod monitor' } },
    ]);
    expect(overrides.apis).toContainEqual({
      name: 'basic-api',
      properties: { serviceUrl: 'https://prod.example' },
    });
    expect(overrides.backends).toContainEqual({
      name: 'backend1',
      properties: { url: 'https://backend.prod.example' },
    });
    expect(overrides.namedValues).toContainEqual({
      name: 'environment-name',
      properties: { value: 'production' },
    });

    // And importing the folder with the overrides again gives prod's configuration back.
    const again = path.join(work, 'again', 'gateway.yaml');
    const reimported = await runCli(['import', 'apiops', artifacts, '--config', again, '--overrides', prod]);
    expect(reimported.status, reimported.stderr).toBe(0);
    expect(configOf(again)).toEqual(prodConfig);
  });
});
