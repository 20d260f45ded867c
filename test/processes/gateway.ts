import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { compileGateway } from '../../src/config/gateway.js';
import { type LoadedConfig, loadConfigFile } from '../../src/config/load.js';
import { bootstrapApis, freePort, tracingPlan } from '../../src/config/plan.js';
import { certificateTables } from '../../src/engine/certificates.js';
import {
  createEngine,
  credentialManagerOver,
  type EngineOptions,
  identitiesOf,
} from '../../src/engine/engine.js';
import { assertExtAuthzServes } from '../../src/engine/ext-authz-check.js';
import { buildBootstrap } from '../../src/envoy/bootstrap/bootstrap.js';
import type { BootstrapPlan } from '../../src/envoy/bootstrap/plan.js';
import { startExtAuthzServer } from '../../src/extauthz/server.js';
import {
  type ExtProcServerOptions,
  type ListeningExtProcServer,
  startExtProcServer,
} from '../../src/extproc/server.js';
import { type RunningEnvoy, startEnvoy } from './envoy.js';
import { type EngineTransport, withExtAuthz } from './ext-authz.js';

export interface GatewayStack {
  readonly envoy: RunningEnvoy;
  readonly engine: ListeningExtProcServer;
  /** `http://127.0.0.1:<gateway port>` */
  readonly url: string;
  stop(): Promise<void>;
}

export interface RunningEngine {
  readonly engine: ListeningExtProcServer;
  readonly loaded: LoadedConfig;
}

/**
 * The real engine (in this process) for a gateway configuration, on a free port: `files` are written beside the
 * configuration (policy documents it names).
 */
export async function startEngine(
  configYaml: string,
  files: Record<string, string> = {},
  engineOptions: EngineOptions = {},
  observer?: ExtProcServerOptions['observer'],
  /** `ext_authz`: the engine serves Envoy's ext_authz filter, after the same load-time check `engine --authz` makes. */
  transport: EngineTransport = 'ext_proc',
): Promise<RunningEngine> {
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-gateway-'));
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(directory, name), text);
  const file = path.join(directory, 'gateway.yaml');
  await writeFile(file, configYaml);
  return startEngineForFile(file, engineOptions, observer, transport);
}

/** The real engine (in this process) for a gateway file already on disk, with the files it names beside it. */
export async function startEngineForFile(
  file: string,
  engineOptions: EngineOptions = {},
  observer?: ExtProcServerOptions['observer'],
  transport: EngineTransport = 'ext_proc',
): Promise<RunningEngine> {
  const loaded = await loadConfigFile(file);
  const compiled = compileGateway(loaded);
  if (transport === 'ext_authz') assertExtAuthzServes(compiled, loaded.file);
  const serve = transport === 'ext_authz' ? startExtAuthzServer : startExtProcServer;
  const engine = await serve(
    {
      exchanges: createEngine(compiled, {
        accessLog: false,
        ...(await certificateTables(loaded, compiled)),
        directory: loaded.directory,
        identities: identitiesOf(loaded),
        authorizationsOver: await credentialManagerOver(loaded),
        ...engineOptions,
      }).exchanges,
      ...(observer ? { observer } : {}),
    },
    { host: '127.0.0.1', port: 0 },
  );
  return { engine, loaded };
}

/**
 * A real Envoy and the real engine (in this process) for a gateway configuration: `files` are written beside
 * the configuration (policy documents it names). Ports are free ones; the service cluster points nowhere.
 */
export async function startGateway(
  configYaml: string,
  files: Record<string, string> = {},
  engineOptions: EngineOptions = {},
  /** Changes the generated Envoy bootstrap before Envoy starts (e.g. to stand for an Envoy configured elsewhere). */
  bootstrap: (generated: Record<string, unknown>) => Record<string, unknown> = (generated) => generated,
  /** `ext_authz`: Envoy calls the engine with its ext_authz filter instead of ext_proc (see ./ext-authz.ts). */
  transport: EngineTransport = 'ext_proc',
): Promise<GatewayStack> {
  const running = await startEngine(configYaml, files, engineOptions, undefined, transport);
  return gatewayInFront(running, bootstrap, transport);
}

/** A real Envoy and the real engine (in this process) for a gateway file already on disk. */
export async function startGatewayForFile(file: string): Promise<GatewayStack> {
  return gatewayInFront(await startEngineForFile(file));
}

/** Envoy, from the bootstrap `up` would generate, in front of a running engine. */
async function gatewayInFront(
  { engine, loaded }: RunningEngine,
  bootstrap: (generated: Record<string, unknown>) => Record<string, unknown> = (generated) => generated,
  transport: EngineTransport = 'ext_proc',
): Promise<GatewayStack> {
  const plan: BootstrapPlan = {
    gateway: { host: '127.0.0.1', port: await freePort() },
    admin: { host: '127.0.0.1', port: await freePort() },
    engine: { endpoints: [{ host: '127.0.0.1', port: engine.port }], messageTimeoutMs: 2000 },
    service: { host: '127.0.0.1', port: await freePort() },
    // As `up` plans them: an API the engine would only pass through skips it.
    apis: bootstrapApis(loaded.config),
    backends: loaded.config.backends,
    limits: loaded.config.gateway.limits,
    ...(loaded.config.telemetry?.otlp ? { tracing: tracingPlan(loaded.config.telemetry.otlp) } : {}),
  };
  const generated = bootstrap(buildBootstrap(plan));
  const envoy = await startEnvoy(
    plan,
    transport === 'ext_authz' ? withExtAuthz(generated, plan.engine.messageTimeoutMs) : generated,
  );
  return {
    envoy,
    engine,
    url: envoy.gatewayUrl,
    async stop() {
      await envoy.stop();
      await engine.shutdown(100);
    },
  };
}
