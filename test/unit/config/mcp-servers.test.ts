import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { loadConfigText, parseConfig } from '../../../src/config/load.js';
import { toolMatcher } from '../../../src/config/mcp-servers.js';
import { formatDiagnostic } from '../../../src/diagnostic.js';
import { toolOperations } from '../../../src/service/catalog.js';
import { upstreamServers } from '../../../src/service/mcp-upstreams.js';

function problems(text: string): string[] {
  try {
    parseConfig(text, 'gateway.yaml');
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatDiagnostic);
    throw error;
  }
  return [];
}

const weather = (extra = '') => `apis:
  - id: weather
    type: mcp
    urlSuffix: weather
    serviceUrl: http://127.0.0.1:9000/mcp
${extra === '' ? '' : `${extra}\n`}`;

describe('APIs of type mcp', () => {
  it('load with their endpoint operations added, and make no REST-API tools', async () => {
    const loaded = await loadConfigText(
      `${weather('    mcp: { tools: ["get_*"], toolPrefix: wx }')}products: [{ id: tools, apis: [weather] }]\n`,
      '/tmp/gateway.yaml',
    );
    const api = loaded.config.apis[0]!;
    expect(api.operations.map((op) => `${op.id} ${op.method} ${op.urlTemplate}`)).toEqual([
      'mcp-post POST /',
      'mcp-get GET /',
      'mcp-delete DELETE /',
    ]);
    // Served at /weather/mcp: the endpoint is the API's root, so a request reaches serviceUrl itself.
    expect(api.urlSuffix).toBe('weather/mcp');
    expect(toolOperations(loaded.config)).toEqual([]);
    const [server] = upstreamServers(loaded.config);
    expect(server).toMatchObject({ apiId: 'weather', prefix: 'wx', productIds: ['tools'] });
    expect(server!.exposes('get_forecast')).toBe(true);
    expect(server!.exposes('set_alert')).toBe(false);
    // By annotations: only a tool marked read-only is a read tool.
    expect(server!.needsWrite({ name: 'a', inputSchema: { type: 'object' } })).toBe(true);
    expect(
      server!.needsWrite({ name: 'a', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }),
    ).toBe(false);
  });

  it('an MCP API in no product is not aggregated (its scopes come from products)', async () => {
    const loaded = await loadConfigText(weather(), '/tmp/gateway.yaml');
    expect(upstreamServers(loaded.config)).toEqual([]);
  });

  it('refuses operations, a definition, a bad pattern and an mcp block on another type, each at its line and column', () => {
    expect(
      problems(`${weather(`    mcp: { tools: ["get forecast"] }
    operations: [{ method: GET, urlTemplate: /x }]`)}
  - id: courses
    urlSuffix: courses
    serviceUrl: http://127.0.0.1:9001
    mcp: { toolPrefix: c }
`),
    ).toEqual([
      'gateway.yaml:6:20: apis[0].mcp.tools[0]: must be a tool name or a pattern of tool-name characters (A-Z a-z 0-9 _ - . /) and "*", got "get forecast"',
      "gateway.yaml:7:5: apis[0].operations: an MCP API's operations are its endpoint's POST, GET and DELETE /mcp, added by Portcullis: list none (policies per tool go in the API policy, see docs/oauth-and-mcp.md)",
      'gateway.yaml:12:5: apis[1].mcp: "mcp" is for an API of type mcp, got type http',
    ]);
  });

  it('refuses two MCP APIs with one tool prefix, and auth without keys the engine can read', () => {
    const two = `${weather()}  - id: wx
    type: mcp
    urlSuffix: wx
    serviceUrl: http://127.0.0.1:9002/mcp
    mcp: { toolPrefix: weather }
products: [{ id: tools, apis: [weather, wx] }]
`;
    expect(problems(two)).toEqual([
      'gateway.yaml:10:5: apis[1].mcp: the tool prefix "weather" is also apis[0]\'s: tool names in /v1/mcp would clash (set mcp.toolPrefix)',
    ]);
    const withAuth = `${weather()}products: [{ id: tools, apis: [weather] }]
auth: { issuer: "http://127.0.0.1:8080", baseUrl: "http://127.0.0.1:8080" }
`;
    expect(problems(withAuth)).toEqual([
      expect.stringMatching(
        /^gateway\.yaml:3:5: apis\[0\]\.type: the engine checks an MCP server API's access tokens with the authorization server's keys.*set one of them/,
      ),
    ]);
    expect(
      problems(
        withAuth.replace('baseUrl: "http://127.0.0.1:8080"', 'baseUrl: "http://127.0.0.1:8080", dataDir: d'),
      ),
    ).toEqual([]);
  });

  it('matches tool patterns whole, `*` as any run of characters, case-sensitive', () => {
    const matches = toolMatcher(['get_*', 'exact.name', '*_report']);
    expect(['get_x', 'get_', 'exact.name', 'daily_report'].map(matches)).toEqual([true, true, true, true]);
    expect(['Get_x', 'exactxname', 'forget_x', 'report'].map(matches)).toEqual([false, false, false, false]);
  });
});
