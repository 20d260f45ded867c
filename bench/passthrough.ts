/**
 * The same small GET (a) through Envoy straight to the backend and (b) through Envoy + the engine passing through,
 * measured in one run; prints requests/s, p50/p99 and the ratio b/a.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { findEnvoy } from '../envoy/binary.js';
import { buildBootstrap } from '../envoy/bootstrap.js';
import { envoyArgs } from '../src/config/envoy.js';
import { freePort } from '../src/config/plan.js';
import {
  formatLoad,
  httpOk,
  load,
  spawnChild,
  startEngineProcess,
  startStaticBackend,
  stopChildren,
  waitFor,
} from './support/stack.js';

const engineProcesses = Number(process.env.BENCH_ENGINES ?? 1);
const seconds = Number(process.env.BENCH_SECONDS ?? 8);

const backendPort = await freePort();
const enginePorts = await Promise.all(Array.from({ length: engineProcesses }, () => freePort()));
const gatewayPort = await freePort();
const adminPort = await freePort();

await startStaticBackend(backendPort);
await Promise.all(enginePorts.map(startEngineProcess));

const bootstrap = buildBootstrap({
  gateway: { host: '127.0.0.1', port: gatewayPort },
  admin: { host: '127.0.0.1', port: adminPort },
  engine: { endpoints: enginePorts.map((port) => ({ host: '127.0.0.1', port })), messageTimeoutMs: 1000 },
  service: { host: '127.0.0.1', port: backendPort },
  apis: [
    { id: 'direct', urlSuffix: 'direct', serviceUrl: `http://127.0.0.1:${backendPort}` },
    { id: 'engine', urlSuffix: 'engine', serviceUrl: `http://127.0.0.1:${backendPort}` },
  ],
}) as any;
// The baseline route skips ext_proc, exactly as a route without any engine in front of it would.
const routes =
  bootstrap.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config
    .virtual_hosts[0].routes;
const direct = routes.find((route: { name: string }) => route.name === 'api_direct');
direct.typed_per_filter_config = {
  'envoy.filters.http.ext_proc': {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute',
    disabled: true,
  },
};
const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-bench-'));
const file = path.join(directory, 'envoy.yaml');
await writeFile(file, stringify(bootstrap));
spawnChild(findEnvoy(), envoyArgs(file, { concurrency: 1, logLevel: 'error' }));
await waitFor(
  async () => (await (await fetch(`http://127.0.0.1:${adminPort}/ready`)).text()).includes('LIVE'),
  'envoy',
);
await waitFor(httpOk(`http://127.0.0.1:${gatewayPort}/engine/api/Course`), 'route through the engine');

const a = await load(`http://127.0.0.1:${gatewayPort}/direct/api/Course`, { seconds });
const b = await load(`http://127.0.0.1:${gatewayPort}/engine/api/Course`, { seconds });
console.log(
  `passthrough (${engineProcesses} engine process${engineProcesses > 1 ? 'es' : ''}, Envoy concurrency 1, 32 connections, ${seconds} s each)`,
);
console.log(formatLoad('  (a) Envoy → backend', a));
console.log(formatLoad('  (b) Envoy + engine → backend', b));
console.log(`  ratio b/a ${(b.requestsPerSecond / a.requestsPerSecond).toFixed(2)}   (target ≥ 0.85)`);
stopChildren();
