/**
 * What the engine does itself on a request to an MCP server API's own URL, before any policy: the authorization
 * server's check of the Host, Origin and client's token (mcp-access.ts; the token is never forwarded) and, on a POST,
 * the API's tool rules (mcp-tools.ts): the body read, a hidden or ungranted tool's call answered here, a listing's
 * answer reshaped.
 */
import type { PhaseRequests } from '../../extproc/exchange.js';
import { firstHeader, type HeaderFields } from '../../extproc/headers.js';
import type { FinalResponse } from '../../policy/index.js';
import type { McpToolFilter } from '../mcp-tools.js';
import type { PolicyEngine } from './policy-engine.js';
import { bearerRefusal } from './refusals.js';
import type { Forwarded } from './state.js';

export class McpGate {
  #listIds: ReadonlySet<string> = new Set();

  private constructor(
    /** The client's `Authorization` the engine checked: for the gateway, never forwarded. */
    readonly authorization: string | undefined,
    private readonly filter: McpToolFilter | undefined,
    /** The checked token's scopes, which the write rule reads; undefined without `auth`. */
    private readonly granted: readonly string[] | undefined,
  ) {}

  /** The gate of an MCP server API's request, or the refusal of its token; undefined for any other API. */
  static async open(
    engine: Pick<PolicyEngine, 'mcpAccess' | 'mcpTools'>,
    apiId: string,
    method: string,
    headers: HeaderFields,
  ): Promise<McpGate | FinalResponse | undefined> {
    const access = await engine.mcpAccess?.check(apiId, headers);
    if (access?.kind === 'refused') return bearerRefusal(access);
    const allowed = access?.kind === 'allowed' ? access : undefined;
    // Only a POST carries JSON-RPC (GET is the server's stream, DELETE ends a session); without a token the write
    // rule has nothing to decide by, so only a filter that hides tools reads the bodies.
    const rules = method === 'POST' ? engine.mcpTools?.get(apiId) : undefined;
    const filter = rules && (rules.hides || allowed) ? rules : undefined;
    return allowed || filter ? new McpGate(allowed?.authorization, filter, allowed?.scopes) : undefined;
  }

  /** With a filter, the body is read before any policy, and the answer's headers seen (a listing's body is asked). */
  phases(phases: PhaseRequests, requestHasBody: boolean): PhaseRequests {
    return this.filter ? { ...phases, requestBody: requestHasBody, responseHeaders: true } : phases;
  }

  /** The JSON-RPC error for a call of a hidden tool, else nothing (and the listings' ids are kept). */
  async inspect(body: Buffer): Promise<FinalResponse | undefined> {
    await this.filter?.recall(body);
    const inspected = this.filter?.inspect(body, this.granted);
    if (inspected?.kind === 'refused') return inspected.response;
    if (inspected) this.#listIds = inspected.listIds;
    return undefined;
  }

  /** What rewrites the answer, when the request listed tools. */
  get reshape(): Forwarded['reshape'] {
    const { filter } = this;
    const listIds = this.#listIds;
    if (!filter || listIds.size === 0) return undefined;
    return (body, head) => filter.reshape(body, firstHeader(head.headers, 'content-type') ?? '', listIds);
  }
}
