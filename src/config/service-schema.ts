import { z } from 'zod';

/**
 * The `auth` and `mcp` sections of the gateway configuration: the Koa service's OAuth 2.1 authorization server and
 * MCP endpoint. Strict like the rest of the file.
 */
export const authConfigSchema = z
  .object({
    /** {auth_url}: the issuer, where token, registration and revocation live. */
    issuer: z.string().url(),
    /** {base_url}: the MCP host and the authorization endpoint. */
    baseUrl: z.string().url(),
  })
  .strict();

export const mcpConfigSchema = z.object({}).strict();

export type AuthConfig = z.infer<typeof authConfigSchema>;
export type McpConfig = z.infer<typeof mcpConfigSchema>;
