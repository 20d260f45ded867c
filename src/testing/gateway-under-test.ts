/**
 * The configuration the tests run against, compiled as the engine compiles it (the same pipelines and elements),
 * once per set of named values a case asks for.
 */
import { SubscriptionDirectory } from '../catalog/subscriptions.js';
import { type CompiledGateway, compileGateway } from '../config/gateway.js';
import { type LoadedConfig, loadConfigFile } from '../config/load.js';
import { BackendRoutes } from '../engine/backend-routes.js';
import { certificateTables } from '../engine/certificates.js';
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
    // The trust store and the backends' certificates do not depend on what the policies use (named values may
    // change that); a case may present a client certificate whatever the configuration asks of clients.
    const compiled = compileGateway(loaded);
    const tables = await certificateTables(loaded, compiled, true);
    const gateway = new GatewayUnderTest(loaded, tables.trust, tables.backendCertificates);
    gateway.#compiled.set(GatewayUnderTest.#key({}), gateway.#forTest(compiled));
    return gateway;
  }

  get file(): string {
    return this.loaded.file;
  }

  /** The gateway with these named values over the configuration's (a secret one stays secret). */
  compiled(namedValues: Readonly<Record<string, string>>): CompiledForTest {
    const key = GatewayUnderTest.#key(namedValues);
    const known = this.#compiled.get(key);
    if (known) return known;
    const config = this.loaded.config;
    const merged = { ...config.namedValues };
    for (const [name, value] of Object.entries(namedValues)) {
      const existing = merged[name];
      merged[name] = typeof existing === 'object' ? { ...existing, value } : value;
    }
    const compiled = this.#forTest(
      compileGateway({ ...this.loaded, config: { ...config, namedValues: merged } }),
    );
    this.#compiled.set(key, compiled);
    return compiled;
  }

  static #key(namedValues: Readonly<Record<string, string>>): string {
    return JSON.stringify(Object.entries(namedValues).sort());
  }

  #forTest(gateway: CompiledGateway): CompiledForTest {
    return {
      gateway,
      subscriptions: new SubscriptionDirectory(gateway.config),
      routes: new BackendRoutes(gateway.config.apis, gateway.backends),
      origins: clusterOrigins(gateway.config.apis, gateway.backends),
    };
  }
}
