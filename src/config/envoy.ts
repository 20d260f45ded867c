import { stringify } from 'yaml';
import { buildBootstrap } from '../envoy/bootstrap/bootstrap.js';
import type { Bootstrap } from '../envoy/config-types.js';
import type { RuntimePlan } from './plan.js';

export function bootstrapYaml(plan: RuntimePlan): string {
  return renderBootstrap(buildBootstrap(plan));
}

export function bootstrapObject(plan: RuntimePlan): Bootstrap {
  return buildBootstrap(plan);
}

export function renderBootstrap(bootstrap: Record<string, unknown>): string {
  return stringify(bootstrap, { lineWidth: 0 });
}

export interface EnvoyArgsOptions {
  readonly concurrency: number;
  readonly logLevel: string;
  /** The configuration's `envoy.drainSeconds` / `envoy.parentShutdownSeconds` (defaults below). */
  readonly drainSeconds?: number;
  readonly parentShutdownSeconds?: number;
}

/** One generation of a hot-restarted Envoy. */
export interface HotRestartEpoch {
  /** 0 for the first Envoy, one more for each Envoy that takes over from the previous one. */
  readonly epoch: number;
  /** Epoch 0 picks a free base id and writes it here; later epochs read it from here. */
  readonly baseIdFile: string;
  /** The base id epoch 0 chose (required from epoch 1 on). */
  readonly baseId?: number;
}

/**
 * How long the previous Envoy keeps serving the connections it has once the next one took the listen sockets:
 * during the drain time it asks each of its HTTP/1 clients to close (`Connection: close` on the next response,
 * GOAWAY for HTTP/2), and it exits after the parent shutdown time. A request longer than that is cut.
 */
const defaultDrainSeconds = 2;
const defaultParentShutdownSeconds = 5;

/**
 * Envoy's own log lines in the shape of every Portcullis process's (src/log.ts): `up` shows them like the others, a
 * log pipeline parses them like the others. `%j` is the message escaped for a JSON string; levels are Envoy's
 * (trace, debug, info, warning, error, critical).
 */
const envoyLogFormat = '{"level":"%l","time":"%Y-%m-%dT%T.%e%z","logger":"%n","message":"%j"}';

/**
 * Command-line arguments for one Envoy. Without `hotRestart`, hot restart is off: each Envoy owns its base id,
 * so several (tests in parallel) can run on one machine without sharing memory segments. With it, the first
 * epoch lets Envoy choose a base id nobody on the machine uses (several `up` run at once in the tests), and each
 * later epoch joins that base id. `adminAddressFile`: where Envoy writes the address its admin bound (the
 * bootstrap may leave the port to the system).
 */
export function envoyArgs(
  bootstrapFile: string,
  options: EnvoyArgsOptions,
  hotRestart?: HotRestartEpoch,
  adminAddressFile?: string,
): string[] {
  const restart = hotRestart
    ? [
        ...(hotRestart.epoch === 0
          ? ['--use-dynamic-base-id', '--base-id-path', hotRestart.baseIdFile]
          : ['--base-id', String(requireBaseId(hotRestart)), '--restart-epoch', String(hotRestart.epoch)]),
        '--drain-time-s',
        String(options.drainSeconds ?? defaultDrainSeconds),
        '--parent-shutdown-time-s',
        String(options.parentShutdownSeconds ?? defaultParentShutdownSeconds),
      ]
    : ['--disable-hot-restart'];
  return [
    '-c',
    bootstrapFile,
    '--concurrency',
    String(options.concurrency),
    '-l',
    options.logLevel,
    ...restart,
    ...(adminAddressFile === undefined ? [] : ['--admin-address-path', adminAddressFile]),
    '--log-format',
    envoyLogFormat,
  ];
}

function requireBaseId(hotRestart: HotRestartEpoch): number {
  if (hotRestart.baseId === undefined)
    throw new TypeError(`epoch ${hotRestart.epoch} needs the base id of epoch 0`);
  return hotRestart.baseId;
}

/** The shared memory segment a hot-restart family keeps (Envoy scales the base id by 10 for its names). */
export function hotRestartSharedMemory(baseId: number): string {
  return `/dev/shm/envoy_shared_memory_${baseId * 10}`;
}

type Json = Record<string, unknown>;

/**
 * The bootstrap to run while the engines still serve the previous configuration: `next`, minus the routes that
 * match requests `previous` did not route (an Envoy route for an API the engines do not know yet would send its
 * requests to the backend without their policies), plus the clusters of `previous` that `next` dropped (the
 * engines still pick them until they reloaded). Equal to `next` when nothing is added and nothing removed.
 */
export function transitionBootstrap(previous: Bootstrap, next: Bootstrap): Bootstrap {
  return transitionJson(previous, next) as unknown as Bootstrap;
}

function transitionJson(previousBootstrap: Bootstrap, nextBootstrap: Bootstrap): Json {
  const previous = previousBootstrap as unknown as Json;
  const next = nextBootstrap as unknown as Json;
  const known = new Set<string>();
  forEachRouteList(previous, (key, routes) => {
    for (const route of routes) known.add(routeKey(key, route));
  });
  const transition = structuredClone(next);
  forEachRouteList(transition, (key, routes, replace) =>
    replace(routes.filter((route) => known.has(routeKey(key, route)))),
  );
  const resources = transition.static_resources as { clusters?: Json[] } | undefined;
  const previousClusters = (previous.static_resources as { clusters?: Json[] } | undefined)?.clusters ?? [];
  if (resources?.clusters) {
    const names = new Set(resources.clusters.map((cluster) => cluster.name));
    resources.clusters.push(...previousClusters.filter((cluster) => !names.has(cluster.name)));
  }
  return transition;
}

function routeKey(virtualHost: string, route: unknown): string {
  return `${virtualHost}\u0000${JSON.stringify((route as Json).match)}`;
}

/** Calls `visit` with the routes of every virtual host of every route configuration found in the bootstrap. */
function forEachRouteList(
  node: unknown,
  visit: (key: string, routes: readonly unknown[], replace: (routes: unknown[]) => void) => void,
): void {
  if (Array.isArray(node)) {
    for (const item of node) forEachRouteList(item, visit);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Json;
  if (Array.isArray(record.virtual_hosts)) {
    for (const host of record.virtual_hosts as Json[]) {
      if (!Array.isArray(host.routes)) continue;
      visit(`${String(record.name)}\u0000${String(host.name)}`, host.routes, (routes) => {
        host.routes = routes;
      });
    }
    return;
  }
  for (const value of Object.values(record)) forEachRouteList(value, visit);
}
