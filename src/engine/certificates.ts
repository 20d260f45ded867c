import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { thumbprintOf } from '../certificate-thumbprint.js';
import { ConfigError } from '../config/config-error.js';
import type { CertificatesUsed, CompiledGateway } from '../config/gateway.js';
import {
  type FileContents,
  fileText,
  type LoadedConfig,
  problemInText,
  readNamedFile,
} from '../config/load.js';
import type { GatewayConfig } from '../config/schema.js';
import type { Diagnostic } from '../diagnostic.js';
import type { BackendCertificates } from '../policy/elements/authentication-certificate.js';
import type { CertificateKeys, ClientCertificate } from '../policy/index.js';
import { type TrustStore, trustStore } from './client-certificate.js';

/** A certificate of the store (tls.certificates) as read at start: what its users need of it. */
interface StoreEntry {
  readonly certificate?: { readonly pem: string; readonly thumbprint: string };
  readonly key?: { readonly pem: string; readonly object: KeyObject };
}

/** The store's certificates something can use, by id; the others are not read. */
export type CertificateStore = ReadonlyMap<string, StoreEntry>;

/** The three tables the engine builds from the store and the client CA file. */
export interface CertificateTables {
  readonly trust: TrustStore;
  readonly backendCertificates: BackendCertificates;
  readonly certificateKeys: CertificateKeys;
}

/**
 * The engine's certificate tables for a compiled configuration, its files read once at start (from `loaded.files`
 * when it holds them: the running configuration's snapshot, else from the disk). `clientCertificates`: whether
 * requests can bring a client certificate, whose issuer the store's certificates may be — when the gateway asks
 * clients for one (tls.clientCertificates), or always in policy tests (a case may present one).
 */
export async function certificateTables(
  loaded: LoadedConfig,
  gateway: Pick<CompiledGateway, 'certificatesUsed'>,
  clientCertificates = loaded.config.tls?.clientCertificates !== undefined,
): Promise<CertificateTables> {
  const store = await readCertificateStore(loaded, gateway.certificatesUsed, clientCertificates);
  return {
    trust: await clientTrustStore(
      loaded.config,
      loaded.directory,
      clientCertificates ? store : new Map(),
      loaded.files,
    ),
    backendCertificates: backendCertificateTable(loaded.config, store),
    certificateKeys: certificatePrivateKeys(store),
  };
}

/**
 * Reads the certificates of the store that something can use, and only those: the one Envoy presents to a backend
 * (tls.backends: its certificate, for the thumbprint authentication-certificate checks), those policies present or
 * decrypt with (certificate and key; all of them when one is chosen per request), and, when requests can bring a
 * client certificate, every certificate, as an issuer the trust store names. A used entry that cannot be read, or holds
 * no certificate or key, fails the load at its key in the configuration file (file:line:col); an unused one is never
 * opened, as API Management keeps certificates no policy names.
 */
export async function readCertificateStore(
  loaded: LoadedConfig,
  used: CertificatesUsed,
  clientCertificates: boolean,
): Promise<CertificateStore> {
  const tls = loaded.config.tls;
  const store = new Map<string, StoreEntry>();
  if (!tls) return store;
  const problems: Diagnostic[] = [];
  const problem = (keys: (string | number)[], message: string) => {
    const text =
      fileText(loaded.files, loaded.file) ??
      (existsSync(loaded.file) ? readFileSync(loaded.file, 'utf8') : '');
    problems.push(problemInText(text, loaded.file, keys, message));
  };
  const read = async (id: string, what: 'certificate' | 'key'): Promise<string | undefined> => {
    const name = tls.certificates[id]![what];
    const file = path.resolve(loaded.directory, name);
    try {
      return (await readNamedFile(file, loaded.files)).toString('utf8');
    } catch (error) {
      problem(
        ['tls', 'certificates', id, what],
        `${what} file "${name}" cannot be read (${file}): ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
      return undefined;
    }
  };
  const backendIds = new Set(Object.values(tls.backends).map((backend) => backend.certificateId));
  for (const id of Object.keys(tls.certificates)) {
    const withKey = used.all || used.ids.has(id);
    if (!withKey && !backendIds.has(id) && !clientCertificates) continue;
    const entry: { certificate?: StoreEntry['certificate']; key?: StoreEntry['key'] } = {};
    const certificatePem = await read(id, 'certificate');
    if (certificatePem !== undefined) {
      try {
        entry.certificate = {
          pem: certificatePem,
          thumbprint: thumbprintOf(new X509Certificate(certificatePem)),
        };
      } catch (error) {
        problem(
          ['tls', 'certificates', id, 'certificate'],
          `"${tls.certificates[id]!.certificate}" holds no certificate (PEM or DER): ${(error as Error).message}`,
        );
      }
    }
    const keyPem = withKey ? await read(id, 'key') : undefined;
    if (keyPem !== undefined) {
      try {
        entry.key = { pem: keyPem, object: createPrivateKey(keyPem) };
      } catch (error) {
        problem(
          ['tls', 'certificates', id, 'key'],
          `"${tls.certificates[id]!.key}" holds no private key: ${(error as Error).message}`,
        );
      }
    }
    store.set(id, entry);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return store;
}

/**
 * The engine's trust store for client certificates (validate-client-certificate): the CAs of
 * tls.clientCertificates.trustedCa, and the certificates of `store` by id (issuer-certificate-id). The CA file is read
 * once at start, from `files` when it holds it, else from the disk.
 */
export async function clientTrustStore(
  config: GatewayConfig,
  directory: string,
  store: CertificateStore,
  files?: FileContents,
): Promise<TrustStore> {
  const tls = config.tls;
  if (!tls) return trustStore([]);
  const sources: { pem: string; id?: string }[] = [];
  if (tls.clientCertificates?.trustedCa) {
    const file = path.resolve(directory, tls.clientCertificates.trustedCa);
    sources.push({ pem: (await readNamedFile(file, files)).toString('utf8') });
  }
  for (const [id, entry] of store) if (entry.certificate) sources.push({ pem: entry.certificate.pem, id });
  return trustStore(sources);
}

/** What Envoy presents to each backend (tls.backends), for authentication-certificate. */
export function backendCertificateTable(config: GatewayConfig, store: CertificateStore): BackendCertificates {
  const presented = new Map<string, { id: string; thumbprint: string }>();
  for (const [target, backend] of Object.entries(config.tls?.backends ?? {})) {
    const thumbprint = store.get(backend.certificateId)?.certificate?.thumbprint;
    if (thumbprint !== undefined) presented.set(target, { id: backend.certificateId, thumbprint });
  }
  return {
    presented: (target) => presented.get(target.backendId ?? target.apiId ?? ''),
  };
}

/**
 * The private keys of the store's certificates policies use, by id, for `<decryption-keys><key certificate-id>`
 * (RSA-OAEP), and the certificates with their keys that side requests present (send-request's
 * authentication-certificate), by id or thumbprint.
 */
export function certificatePrivateKeys(store: CertificateStore): CertificateKeys {
  const keys = new Map<string, KeyObject>();
  const byId = new Map<string, ClientCertificate>();
  const byThumbprint = new Map<string, ClientCertificate>();
  for (const [id, { certificate, key }] of store) {
    if (certificate === undefined || key === undefined) continue;
    keys.set(id, key.object);
    const presented: ClientCertificate = {
      kind: 'pem',
      certificate: certificate.pem,
      key: key.pem,
      poolKey: `store:${id}`,
      label: `certificate "${id}"`,
    };
    byId.set(id, presented);
    // Two ids may hold the same certificate: the first one answers for its thumbprint.
    if (!byThumbprint.has(certificate.thumbprint)) byThumbprint.set(certificate.thumbprint, presented);
  }
  return {
    privateKey: (id) => keys.get(id),
    clientCertificate: (which) =>
      'id' in which ? byId.get(which.id) : byThumbprint.get(which.thumbprint.toUpperCase()),
  };
}
