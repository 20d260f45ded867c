import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import path from 'node:path';
import { thumbprintOf } from '../certificate-thumbprint.js';
import { type FileContents, readNamedFile } from '../config/load.js';
import type { GatewayConfig } from '../config/schema.js';
import type { BackendCertificates } from '../policy/elements/authentication-certificate.js';
import type { CertificateKeys, ClientCertificate } from '../policy/index.js';
import { type TrustStore, trustStore } from './client-certificate.js';

/**
 * The engine's trust store for client certificates (validate-client-certificate): the CAs of
 * tls.clientCertificates.trustedCa, and the store's certificates by id (issuer-certificate-id). Read once at start,
 * from `files` when it holds them (the running configuration's snapshot), else from the disk.
 */
export async function clientTrustStore(
  config: GatewayConfig,
  directory: string,
  files?: FileContents,
): Promise<TrustStore> {
  const tls = config.tls;
  if (!tls) return trustStore([]);
  const pem = async (file: string) =>
    (await readNamedFile(path.resolve(directory, file), files)).toString('utf8');
  const sources: { pem: string; id?: string }[] = [];
  if (tls.clientCertificates?.trustedCa) sources.push({ pem: await pem(tls.clientCertificates.trustedCa) });
  for (const [id, entry] of Object.entries(tls.certificates)) {
    sources.push({ pem: await pem(entry.certificate), id });
  }
  return trustStore(sources);
}

/**
 * What Envoy presents to each backend (tls.backends), for authentication-certificate. Read once at start, from
 * `files` when it holds them, else from the disk.
 */
export async function backendCertificateTable(
  config: GatewayConfig,
  directory: string,
  files?: FileContents,
): Promise<BackendCertificates> {
  const presented = new Map<string, { id: string; thumbprint: string }>();
  for (const [target, backend] of Object.entries(config.tls?.backends ?? {})) {
    const file = path.resolve(directory, config.tls!.certificates[backend.certificateId]!.certificate);
    const certificate = new X509Certificate(await readNamedFile(file, files));
    presented.set(target, {
      id: backend.certificateId,
      thumbprint: thumbprintOf(certificate),
    });
  }
  return {
    presented: (target) => presented.get(target.backendId ?? target.apiId ?? ''),
  };
}

/**
 * The private keys of the certificate store (tls.certificates) by id, for `<decryption-keys><key certificate-id>`
 * (RSA-OAEP), and the certificates with their keys that side requests present (send-request's
 * authentication-certificate), by id or thumbprint. Read once at start, from `files` when it holds them, else from
 * the disk.
 */
export async function certificatePrivateKeys(
  config: GatewayConfig,
  directory: string,
  files?: FileContents,
): Promise<CertificateKeys> {
  const keys = new Map<string, KeyObject>();
  const byId = new Map<string, ClientCertificate>();
  const byThumbprint = new Map<string, ClientCertificate>();
  for (const [id, entry] of Object.entries(config.tls?.certificates ?? {})) {
    const keyPem = (await readNamedFile(path.resolve(directory, entry.key), files)).toString('utf8');
    const certificatePem = await readNamedFile(path.resolve(directory, entry.certificate), files);
    keys.set(id, createPrivateKey(keyPem));
    const thumbprint = thumbprintOf(new X509Certificate(certificatePem));
    const presented: ClientCertificate = {
      kind: 'pem',
      certificate: certificatePem.toString('utf8'),
      key: keyPem,
      poolKey: `store:${id}`,
      label: `certificate "${id}"`,
    };
    byId.set(id, presented);
    // Two ids may hold the same certificate: the first one answers for its thumbprint.
    if (!byThumbprint.has(thumbprint)) byThumbprint.set(thumbprint, presented);
  }
  return {
    privateKey: (id) => keys.get(id),
    clientCertificate: (which) =>
      'id' in which ? byId.get(which.id) : byThumbprint.get(which.thumbprint.toUpperCase()),
  };
}
