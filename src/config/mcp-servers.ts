import { z } from 'zod';
import type { CrossFieldIssue } from './checks.js';
import { rootOperation } from './root-operation.js';
import type { ApiConfig, GatewayConfig, OperationConfig } from './schema.js';

/**
 * An API of type `mcp`: a remote MCP server (Streamable HTTP) at the API's `serviceUrl`, published at
 * `/<urlSuffix>/mcp` through Envoy and the engine like any API, and aggregated into the service's `/v1/mcp`. Like API
 * Management's "existing MCP server" (learn.microsoft.com/azure/api-management/expose-existing-mcp-server), it is an
 * API resource with the usual policy scopes; which tools are shown and what they need is said here.
 */

/** A tool name, or a pattern where `*` stands for any run of characters (`get_*`, `*_report`). */
const toolPattern = z.string().regex(/^[A-Za-z0-9_.*/-]{1,128}$/, {
  message: 'must be a tool name or a pattern of tool-name characters (A-Z a-z 0-9 _ - . /) and "*"',
});

export const mcpServerSchema = z
  .object({
    /**
     * The upstream tools shown (in `/v1/mcp` and at the API's own URL); all when absent. A tool not shown is neither
     * listed nor callable.
     */
    tools: z.array(toolPattern).min(1).optional(),
    /**
     * Which tools need `write:<product>-work` (the others `read:<product>-work`): `annotations` — every tool the
     * server does not mark `readOnlyHint: true` — or a list of names and patterns.
     */
    writeTools: z.union([z.literal('annotations'), z.array(toolPattern)]).default('annotations'),
    /** What the aggregated endpoint puts before each tool name, `<prefix>__<tool>`; default the API id. */
    toolPrefix: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,32}$/, { message: 'must be 1-32 letters, digits or "-"' })
      .optional(),
  })
  .strict();

export type McpServerConfig = z.infer<typeof mcpServerSchema>;

/** The path of an MCP API's endpoint under its URL suffix: `/<urlSuffix>/mcp`. */
export const mcpEndpointPath = '/mcp';

/** The separator between an upstream server's prefix and its tool's name in `/v1/mcp`. */
export const toolPrefixSeparator = '__';

/** The prefix of an MCP API's tools in the aggregated endpoint. */
export function toolPrefixOf(api: Pick<ApiConfig, 'id' | 'mcp'>): string {
  return api.mcp?.toolPrefix ?? api.id;
}

/**
 * The operations of an MCP API: the three methods of a Streamable HTTP endpoint, at the root of the API once its URL
 * suffix ends with `/mcp` (expandMcpServers), so a request to `/<urlSuffix>/mcp` reaches `serviceUrl` itself and the
 * engine runs the API's policies on it (per-tool behaviour comes from the request: see docs/oauth-and-mcp.md).
 */
export function mcpServerOperations(): OperationConfig[] {
  return (['POST', 'GET', 'DELETE'] as const).map((method) =>
    rootOperation(`mcp-${method.toLowerCase()}`, method),
  );
}

/**
 * The configuration with every MCP API served at `/<urlSuffix>/mcp`: its URL suffix gets the `/mcp` (from here on,
 * every part of Portcullis sees the endpoint's own suffix) and its endpoint operations are added (the file lists none).
 */
export function expandMcpServers(config: GatewayConfig): GatewayConfig {
  if (!config.apis.some((api) => api.type === 'mcp')) return config;
  return {
    ...config,
    apis: config.apis.map((api) =>
      api.type === 'mcp' && api.operations.length === 0
        ? { ...api, urlSuffix: `${api.urlSuffix}${mcpEndpointPath}`, operations: mcpServerOperations() }
        : api,
    ),
  };
}

/**
 * An MCP API's operations are its endpoint's (added by Portcullis), it has no definition file, its `mcp` block is
 * for type `mcp` only, and no two MCP APIs share a tool prefix (their tools would share names in `/v1/mcp`).
 */
export function* mcpServerIssues(config: GatewayConfig): Iterable<CrossFieldIssue> {
  const prefixes = new Map<string, number>();
  const auth = config.auth;
  for (const [index, api] of config.apis.entries()) {
    if (api.type !== 'mcp') {
      if (api.mcp !== undefined)
        yield {
          path: ['apis', index, 'mcp'],
          message: `"mcp" is for an API of type mcp, got type ${api.type}`,
        };
      continue;
    }
    if (api.definition !== undefined)
      yield {
        path: ['apis', index, 'definition'],
        message: 'an MCP API has no definition file: its tools come from the server itself',
      };
    if (api.operations.length > 0)
      yield {
        path: ['apis', index, 'operations'],
        message: `an MCP API's operations are its endpoint's POST, GET and DELETE ${mcpEndpointPath}, added by Portcullis: list none (policies per tool go in the API policy, see docs/oauth-and-mcp.md)`,
      };
    if (auth && auth.dataDir === undefined && auth.signingKeys?.file === undefined)
      yield {
        path: ['apis', index, 'type'],
        message:
          "the engine checks an MCP server API's access tokens with the authorization server's keys, which it reads from " +
          'auth.signingKeys.file or auth.dataDir: set one of them (keys generated in memory stay in the service process)',
      };
    const prefix = toolPrefixOf(api).toLowerCase();
    const previous = prefixes.get(prefix);
    if (previous !== undefined)
      yield {
        path: ['apis', index, api.mcp?.toolPrefix === undefined ? 'id' : 'mcp'],
        message: `the tool prefix "${toolPrefixOf(api)}" is also apis[${previous}]'s: tool names in /v1/mcp would clash (set mcp.toolPrefix)`,
      };
    prefixes.set(prefix, index);
  }
}

/** `*` matches any run of characters; everything else literally (case-sensitive, as tool names are). */
export function toolMatcher(patterns: readonly string[]): (name: string) => boolean {
  const expressions = patterns.map(
    (pattern) => new RegExp(`^${pattern.split('*').map(escapeRegex).join('.*')}$`),
  );
  return (name) => expressions.some((expression) => expression.test(name));
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * An MCP server API's own URL, `<auth.baseUrl>/<urlSuffix>/mcp`, from the suffix of the loaded configuration (which
 * ends with `/mcp`, expandMcpServers): its RFC 9728 `resource` and the audience of the tokens it accepts (the user's,
 * and the service's on the aggregated endpoint's behalf).
 */
export function mcpResourceUrl(baseUrl: string, endpointSuffix: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${endpointSuffix}`;
}
