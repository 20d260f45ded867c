/**
 * The configuration the tests run against, compiled as the engine compiles it (the same pipelines and elements),
 * once per set of named values a case asks for.
 */
import { SubscriptionDirectory } from '../catalog/subscriptions.js';
import { type CompiledGateway, compileGateway } from '../config/gateway.js';
import { type LoadedConfig, loadConfigFile } from '../config/load.js';
import { BackendRoutes } from '../engine/backend-routes.js';
import { backendCertificateTable, clientTrustStore } from '../engine/certificates.js';
import type { TrustStore } from '../engine/client-certificate.js';
import type { BackendCertificates } from '../policy/elements/authentication-certificate.js';
import { clusterOrigins } from './envoy-double.js';

export interface CompiledForTest {
  readonly gateway: CompiledGateway;
  readonly subscriptions: SubscriptionDirectory;
  readonly routes: BackendRoutes;
  readonly origins: ReadonlyMap<string, string>;
}

export class GatewayUnderTest {
  readonly #compiled = new Map<string, CompiledForTest>();

  private constructor(
    readonly loaded: LoadedConfig,
    readonly trust: TrustStore,
    readonly backendCertificates: BackendCertificates,
  ) {}

  static async load(file: string): Promise<GatewayUnderTest> {
    const loaded = await loadConfigFile(file);
    const gateway = new GatewayUnderTest(
      loaded,
      await clientTrustStore(loaded.config, loaded.directory, loaded.files),
      await backendCertificateTable(loaded.config, loaded.directory, loaded.files),
    );
    gateway.compiled({});
    return gateway;
  }

  get file(): string {
    return this.loaded.file;
  }

  /** The gateway with these named values over the configuration's (a secret one stays secret). */
  compiled(namedValues: Readonly<Record<string, string>>): CompiledForTest {
    const key = JSON.stringify(Object.entries(namedValues).sort());
    const known = this.#compiled.get(key);
    if (known) return known;
    const config = this.loaded.config;
    const merged = { ...config.namedValues };
    for (const [name, value] of Object.entries(namedValues)) {
      const existing = merged[name];
      merged[name] = typeof existing === 'object' ? { ...existing, value } : value;
    }
    const gateway = compileGateway({ ...this.loaded, config: { ...config, namedValues: merged } });
    const compiled: CompiledForTest = {
      gateway,
      subscriptions: new SubscriptionDirectory(gateway.config),
      routes: new BackendRoutes(gateway.config.apis, gateway.backends),
      origins: clusterOrigins(gateway.config.apis, gateway.backends),
    };
    this.#compiled.set(key, compiled);
    return compiled;
  }
}
