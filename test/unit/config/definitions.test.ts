import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { loadConfigFile } from '../../../src/config/load.js';
import { formatDiagnostic } from '../../../src/diagnostic.js';

const fixtures = fileURLToPath(new URL('../../fixtures/catalog/openapi/', import.meta.url));

async function gatewayFile(yaml: string): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-definitions-'));
  const file = path.join(directory, 'gateway.yaml');
  await writeFile(file, yaml);
  return file;
}

describe('an API that names its definition file', () => {
  it('publishes the definition operations, with those listed in the configuration winning', async () => {
    const file = await gatewayFile(`apis:
  - id: courses
    urlSuffix: courses
    serviceUrl: http://127.0.0.1:8081
    definition: { format: openapi, file: ${path.join(fixtures, 'courses-3.0.yaml')} }
    operations:
      - { id: listCourses, method: GET, urlTemplate: /api/Course, policy: "<policies><inbound><base /></inbound></policies>" }
`);
    const { config } = await loadConfigFile(file);
    const operations = config.apis[0]!.operations;
    const listed = operations.filter((operation) => operation.id === 'listCourses');
    expect(listed).toHaveLength(1);
    expect(listed[0]!.policy).toContain('<policies>');
    expect(operations.length).toBeGreaterThan(1);
    expect(operations.map((operation) => `${operation.method} ${operation.urlTemplate}`)).toContain(
      'GET /api/Course/{id}',
    );
    expect(config.apis[0]!.serviceUrl).toBe('http://127.0.0.1:8081');
  });

  it('reports a broken definition with its own file and position', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-definitions-'));
    const definition = path.join(directory, 'broken.yaml');
    await writeFile(
      definition,
      'openapi: 3.0.3\ninfo: { title: x, version: "1" }\npaths:\n  /a/{id}:\n    get:\n      responses: { "200": { description: ok } }\n',
    );
    const file = await gatewayFile(
      `apis:\n  - id: a\n    urlSuffix: a\n    serviceUrl: http://127.0.0.1:1\n    definition: { format: openapi, file: broken.yaml }\n`.replace(
        'broken.yaml',
        definition,
      ),
    );
    const error = await loadConfigFile(file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    const [first] = (error as ConfigError).problems.map(formatDiagnostic);
    expect(first).toMatch(new RegExp(`^${definition.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: `));
    expect(first).toContain('id');
  });
});
