/**
 * The MCP protocol revisions this endpoint speaks, and what differs between them. Everything that depends on
 * the negotiated revision reads a flag here instead of comparing date strings in handlers.
 */
export interface Revision {
  readonly id: string;
  /** JSON-RPC batches (a JSON array in one POST): only 2025-03-26 defines them. */
  readonly batches: boolean;
  /** `annotations` on tools (readOnlyHint, …): 2025-03-26 and later. */
  readonly toolAnnotations: boolean;
  /** `audio` content blocks: 2025-03-26 and later. */
  readonly audioContent: boolean;
  /** `title` on tools and `structuredContent` in tool results: 2025-06-18 and later. */
  readonly titlesAndStructuredContent: boolean;
  /** Invalid tool arguments are a tool execution error (`isError: true`), not JSON-RPC -32602: 2025-11-25. */
  readonly inputValidationIsToolError: boolean;
  /** No initialize, no sessions, no GET stream; version travels in every request (2026-07-28). */
  readonly stateless: boolean;
  /**
   * A stream opens with an id-only event (SSE polling, 2025-11-25): older clients may try to parse its empty data,
   * so they get ids on messages only.
   */
  readonly primingEvents: boolean;
  /**
   * Results carry `resultType`, list results `ttlMs` + `cacheScope` (SEP-2549), and the server names itself in each
   * result's `_meta` (2026-07-28).
   */
  readonly resultEnvelope: boolean;
  /**
   * Tool arguments taken from operation header parameters carry `x-mcp-header`, and a `tools/call` must mirror them
   * in `Mcp-Param-*` headers that match the body (SEP-2243, 2026-07-28).
   */
  readonly parameterHeaders: boolean;
}

const table: readonly Revision[] = [
  {
    id: '2024-11-05',
    batches: false,
    toolAnnotations: false,
    audioContent: false,
    titlesAndStructuredContent: false,
    inputValidationIsToolError: false,
    stateless: false,
    primingEvents: false,
    resultEnvelope: false,
    parameterHeaders: false,
  },
  {
    id: '2025-03-26',
    batches: true,
    toolAnnotations: true,
    audioContent: true,
    titlesAndStructuredContent: false,
    inputValidationIsToolError: false,
    stateless: false,
    primingEvents: false,
    resultEnvelope: false,
    parameterHeaders: false,
  },
  {
    id: '2025-06-18',
    batches: false,
    toolAnnotations: true,
    audioContent: true,
    titlesAndStructuredContent: true,
    inputValidationIsToolError: false,
    stateless: false,
    primingEvents: false,
    resultEnvelope: false,
    parameterHeaders: false,
  },
  {
    id: '2025-11-25',
    batches: false,
    toolAnnotations: true,
    audioContent: true,
    titlesAndStructuredContent: true,
    inputValidationIsToolError: true,
    stateless: false,
    primingEvents: true,
    resultEnvelope: false,
    parameterHeaders: false,
  },
  {
    id: '2026-07-28',
    batches: false,
    toolAnnotations: true,
    audioContent: true,
    titlesAndStructuredContent: true,
    inputValidationIsToolError: true,
    stateless: true,
    primingEvents: true,
    resultEnvelope: true,
    parameterHeaders: true,
  },
];

const byId = new Map(table.map((r) => [r.id, r]));

export const revisions = table;
/** Every revision served, oldest first: `server/discover`'s `supportedVersions` and the -32022 error's `supported`. */
export const servedRevisions: readonly string[] = table.map((r) => r.id);
/** Revisions negotiated through `initialize` (the legacy, session-based era). */
export const sessionRevisions: readonly string[] = table.filter((r) => !r.stateless).map((r) => r.id);
export const latestSessionRevision = sessionRevisions[sessionRevisions.length - 1]!;
/** What a request without `MCP-Protocol-Version` and without other evidence is taken to speak (spec 2025-06-18). */
export const defaultRevision = byId.get('2025-03-26')!;

export function findRevision(id: string): Revision | undefined {
  return byId.get(id);
}
