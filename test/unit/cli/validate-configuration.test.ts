import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { command } from '../../../src/cli/commands/validate.js';
import { crossChecks } from '../../../src/config/checks.js';

const example = fileURLToPath(new URL('../../../examples/courses/gateway.yaml', import.meta.url));
const llmExample = fileURLToPath(new URL('../../../examples/llm/gateway.yaml', import.meta.url));
const mcpServersExample = fileURLToPath(
  new URL('../../../examples/mcp-servers/gateway.yaml', import.meta.url),
);

describe('portcullis validate on a gateway configuration', () => {
  let out: string[];
  beforeEach(() => {
    out = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
  });
  afterEach(() => vi.restoreAllMocks());

  it('accepts the bundled example with every policy it names', async () => {
    expect(await command.run([example])).toBe(0);
    expect(out.join('')).toMatch(/^ok: 1 configuration, \d+ policies\n$/);
  });

  it('accepts the AI gateway example (examples/llm) with its token-limit and token-metric policies', async () => {
    expect(await command.run([llmExample])).toBe(0);
    expect(out.join('')).toMatch(/^ok: 1 configuration, \d+ polic(y|ies)\n$/);
  });

  it('accepts the remote MCP servers example (examples/mcp-servers) with its policy', async () => {
    expect(await command.run([mcpServersExample])).toBe(0);
    expect(out.join('')).toBe('ok: 1 configuration, 1 policy\n');
  });

  it('says what it checked when all is well: the configurations and every policy document, fragments included', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-validate-'));
    const policy = '<policies><inbound><base /></inbound></policies>';
    for (const name of ['global.xml', 'api.xml', 'operation.xml', 'other.xml'])
      await writeFile(path.join(directory, name), policy);
    await writeFile(
      path.join(directory, 'fragment.xml'),
      '<fragment><set-header name="x" exists-action="override"><value>1</value></set-header></fragment>',
    );
    const file = path.join(directory, 'gateway.yaml');
    await writeFile(
      file,
      [
        'policy: global.xml',
        'fragments: { shared: fragment.xml }',
        'apis:',
        '  - id: a',
        '    urlSuffix: a',
        '    serviceUrl: http://127.0.0.1:1',
        '    policy: api.xml',
        '    operations: [{ method: GET, urlTemplate: /x, policy: operation.xml }]',
      ].join('\n'),
    );
    expect(await command.run([file])).toBe(0);
    expect(out.join('')).toBe('ok: 1 configuration, 4 policies\n');
    out = [];
    expect(await command.run([file, path.join(directory, 'other.xml')])).toBe(0);
    expect(out.join('')).toBe('ok: 1 configuration, 5 policies\n');
    out = [];
    expect(await command.run([path.join(directory, 'other.xml')])).toBe(0);
    expect(out.join('')).toBe('ok: 1 policy\n');
  });

  it('reports configuration and policy problems with file, line and column', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-validate-'));
    await writeFile(
      path.join(directory, 'api.xml'),
      '<policies>\n  <inbound>\n    <set-header name="x" exists-action="sometimes"><value>{{missing}}</value></set-header>\n  </inbound>\n</policies>\n',
    );
    const file = path.join(directory, 'gateway.yaml');
    await writeFile(
      file,
      'apis:\n  - id: a\n    urlSuffix: a\n    serviceUrl: http://127.0.0.1:1\n    policy: api.xml\n',
    );
    expect(await command.run([file])).toBe(1);
    expect(out.join('')).toBe(
      `${path.join(directory, 'api.xml')}:3:59: named value "missing" is not defined\n`,
    );

    await writeFile(
      file,
      'apis:\n  - id: a\n    urlSuffix: a\n    serviceUrl: http://127.0.0.1:1\n    polcy: api.xml\n',
    );
    out = [];
    expect(await command.run([file])).toBe(1);
    expect(out.join('')).toBe(`${file}:5:5: apis[0].polcy: unknown key "polcy"\n`);
  });

  it('refuses what the service would refuse: an MCP endpoint without an auth section', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-validate-'));
    const file = path.join(directory, 'gateway.yaml');
    await writeFile(file, 'products: [{ id: courses }]\nmcp: { pageSize: 5 }\n');
    expect(await command.run([file])).toBe(1);
    expect(out.join('')).toBe(
      `${file}:2:1: mcp: the MCP endpoint needs an "auth" section (its tokens come from the authorization server)\n`,
    );
  });

  it('places a policy file that does not exist at its key', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-validate-'));
    const file = path.join(directory, 'gateway.yaml');
    await writeFile(
      file,
      'apis:\n  - id: a\n    urlSuffix: a\n    serviceUrl: http://127.0.0.1:1\n    policy: nope.xml\n',
    );
    expect(await command.run([file])).toBe(1);
    expect(out.join('')).toBe(
      `${file}:5:5: apis[0].policy: policy file "nope.xml" not found (looked at ${path.join(directory, 'nope.xml')})\n`,
    );
  });

  it('runs every named cross-field check', async () => {
    const names = crossChecks.map((check) => check.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining(['mcp-needs-auth', 'products-name-scopes', 'network-placement']),
    );
  });
});
