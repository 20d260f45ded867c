import type { McpMethod } from '../protocol/method.js';
import { servedRevisions } from '../protocol/revisions.js';

/**
 * How long a client may reuse the discovery result. What it holds (revisions, capabilities, instructions) changes
 * only with a new release or configuration, and it is the same for every caller, so shared caches may keep it.
 */
export const DISCOVER_TTL_MS = 300_000;

/**
 * `server/discover` (2026-07-28, SEP-2575): the revisions served and the capabilities, for a client that wants to
 * choose a version before its first real request. The server's identity goes in `_meta` like on every result of
 * the stateless revision (the transport adds it).
 */
export const serverDiscover: McpMethod = {
  name: 'server/discover',
  kind: 'request',
  eras: ['stateless'],
  handle(_params, ctx) {
    return {
      supportedVersions: [...servedRevisions],
      capabilities: { tools: { listChanged: true } },
      ...(ctx.instructions ? { instructions: ctx.instructions } : {}),
      ttlMs: DISCOVER_TTL_MS,
      cacheScope: 'public',
    };
  },
};
