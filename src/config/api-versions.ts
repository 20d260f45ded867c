import type { ApiVersionSelector } from '../catalog/catalog.js';
import type { ApiConfig, GatewayConfig } from './schema.js';

export type { ApiVersionSelector };

/**
 * How a request names this API's version, when it is a version of a header- or query-versioned set (whose versions
 * share one URL suffix); undefined for any other API, path versions included. The engine's matching, Envoy's routes
 * and the MCP caller all ask here.
 */
export function apiVersionSelector(config: GatewayConfig, api: ApiConfig): ApiVersionSelector | undefined {
  const version = api.version;
  const set = version && config.versionSets.find((candidate) => candidate.id === version.set);
  if (!version || !set || set.scheme === 'path') return undefined;
  const key = set.scheme === 'header' ? set.header : set.query;
  // The schema requires the name for the scheme; without it the set could not tell its versions apart.
  if (key === undefined)
    throw new TypeError(`version set "${set.id}": scheme ${set.scheme} without its name`);
  return { by: set.scheme, key, name: version.name };
}
