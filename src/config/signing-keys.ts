import path from 'node:path';
import type { JWK } from 'jose';
import { loadSigningKeys } from '../auth/stores/file.js';
import { type LoadedConfig, readNamedFile } from './load.js';

/**
 * Where another process finds the private keys the authorization server signs with: auth.signingKeys.file, or the
 * keys the AS generated and keeps in auth.dataDir. This is the seam through which the engine's `portcullis` identity
 * signs with the published keys without importing the authorization server (the engine may not import auth/): the
 * key files are the contract, read again for each token so a rotation the service made is followed. Undefined when
 * the keys live only in the service's memory (the config check `portcullis-identity` refuses a source that needs them).
 */
export function authorizationServerKeys(loaded: LoadedConfig): (() => Promise<JWK[]>) | undefined {
  const auth = loaded.config.auth;
  if (!auth) return undefined;
  const file = auth.signingKeys?.file;
  if (file !== undefined) {
    const resolved = path.resolve(loaded.directory, file);
    return async () => {
      const parsed = JSON.parse((await readNamedFile(resolved, loaded.files)).toString('utf8')) as {
        keys?: JWK[];
      };
      return Array.isArray(parsed.keys)
        ? parsed.keys.map((key) => withAlgorithm(key, auth.signingKeys?.algorithm))
        : [];
    };
  }
  if (auth.dataDir !== undefined) {
    const dataDir = path.resolve(loaded.directory, auth.dataDir);
    return async () => (await loadSigningKeys(dataDir)) ?? [];
  }
  return async () => [];
}

/** The AS signs a key without `alg` with the configured algorithm (auth/keys.ts), so the engine must too. */
function withAlgorithm(key: JWK, algorithm: string | undefined): JWK {
  return key.alg === undefined ? { ...key, alg: algorithm ?? 'ES256' } : key;
}
