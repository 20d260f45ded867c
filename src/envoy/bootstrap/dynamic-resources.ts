/**
 * The gateway's bootstrap (bootstrap.ts: every listener and cluster static) turned into the one `up` runs: listeners,
 * clusters and route configurations as dynamic resources Envoy reads from files it watches (LDS, CDS, RDS over
 * `path_config_source`), and a bootstrap that keeps only what a running Envoy cannot change — the admin listener,
 * the runtime layer, the overload manager. A change of the files reaches the running Envoy without a new process:
 * a cluster added or changed is warmed before it replaces the old one, a route configuration swaps atomically
 * under the listeners, and a listener whose configuration is unchanged is not touched (its connections and
 * streams go on). Each route configuration is its own file, so an API added or removed changes routes and clusters
 * only: the listeners reference their routes by name and stay the same.
 *
 * Pure: the same function serves whatever the bootstrap's pure builders produce (clusters.ts and its siblings),
 * and `envoy --mode validate` still checks the whole bootstrap before any of it is written.
 */

import { createHash } from 'node:crypto';
import path from 'node:path';
import type {
  Bootstrap,
  DiscoveryFile,
  DynamicBootstrap,
  FileConfigSource,
  RouteConfiguration,
} from '../config-types.js';

/** Which discovery service reads a file. */
export type ResourceKind = 'clusters' | 'routes' | 'listeners';

export interface ResourceFile {
  readonly kind: ResourceKind;
  /** The resource's name: the route configuration's for routes, the kind itself otherwise. */
  readonly name: string;
  /** Absolute; the only file of its directory, which Envoy watches (one directory per file: a move into it reloads it alone). */
  readonly file: string;
  readonly document: DiscoveryFile;
}

export interface DynamicGateway {
  readonly bootstrap: DynamicBootstrap;
  /** In the order a change must reach Envoy: clusters before the routes that use them, routes before listeners. */
  readonly resources: readonly ResourceFile[];
}

const typeUrls: Readonly<Record<ResourceKind, string>> = {
  clusters: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  routes: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  listeners: 'type.googleapis.com/envoy.config.listener.v3.Listener',
};

const connectionManagerType =
  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';

/** `directory` (absolute) holds the resource files; each Envoy process started gets its own. */
export function dynamicGateway(full: Bootstrap, directory: string): DynamicGateway {
  const routes: ResourceFile[] = [];
  const listeners = full.static_resources.listeners.map((listener) =>
    withRoutesByName(listener, listener.name, (configuration) => {
      // Named after its listener: the http and https listeners each keep their own.
      const name = `${listener.name}_${configuration.name}`;
      const file = resourceFile(directory, 'routes', name, [{ ...configuration, name }]);
      routes.push(file);
      return { route_config_name: name, config_source: sourceOf(file) };
    }),
  );
  const clusters = resourceFile(directory, 'clusters', 'clusters', full.static_resources.clusters);
  const listenerFile = resourceFile(directory, 'listeners', 'listeners', listeners);
  const { static_resources: _resources, ...kept } = full;
  return {
    bootstrap: {
      ...kept,
      dynamic_resources: { lds_config: sourceOf(listenerFile), cds_config: sourceOf(clusters) },
    },
    resources: [clusters, ...routes, listenerFile],
  };
}

/** A resource file's text: YAML is JSON, and JSON keeps a file byte-identical when nothing in it changed. */
export function resourceFileText(file: ResourceFile): string {
  return `${JSON.stringify(file.document, null, 1)}\n`;
}

function resourceFile(
  directory: string,
  kind: ResourceKind,
  name: string,
  resources: readonly object[],
): ResourceFile {
  const typed = resources.map((resource) => ({ '@type': typeUrls[kind], ...resource }));
  // The version is the content's: the same resources, the same file, nothing for Envoy to do.
  const version = createHash('sha256').update(JSON.stringify(typed)).digest('hex').slice(0, 16);
  return {
    kind,
    name,
    file: path.join(directory, kind === 'routes' ? `routes-${name}` : kind, `${kind}.json`),
    document: { version_info: version, resources: typed },
  };
}

function sourceOf(file: ResourceFile): FileConfigSource {
  return {
    resource_api_version: 'V3',
    path_config_source: { path: file.file, watched_directory: { path: path.dirname(file.file) } },
  };
}

type Rds = { readonly route_config_name: string; readonly config_source: FileConfigSource };

/** The listener with each connection manager's inline route configuration replaced by a reference to its file. */
function withRoutesByName(
  node: unknown,
  listener: string,
  toRds: (configuration: RouteConfiguration) => Rds,
): Record<string, unknown> {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    const record = value as Record<string, unknown>;
    if (record['@type'] === connectionManagerType && record.route_config !== undefined) {
      const { route_config, ...rest } = record;
      return { ...rest, rds: toRds(route_config as RouteConfiguration) };
    }
    return Object.fromEntries(Object.entries(record).map(([key, child]) => [key, walk(child)]));
  };
  const result = walk(node);
  if (typeof result !== 'object' || result === null)
    throw new TypeError(`listener ${listener} is not an object`);
  return result as Record<string, unknown>;
}
