import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmod, readFile, rename } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeFilePrivate, makePrivateDirectory } from '../state/private-files.js';

const run = promisify(execFile);

export interface CertificateFiles {
  readonly certificateFile: string;
  readonly keyFile: string;
}

/** Renewed this long before it expires, so a running gateway never serves an expired development certificate. */
const renewBeforeMs = 7 * 24 * 3600 * 1000;

/**
 * The self-signed certificate the HTTPS listener uses when the configuration names none: made once (with the
 * system's `openssl`, since node:crypto cannot issue X.509 certificates) in `<folder>/development.pem` and
 * `development.key`, reused while it is valid for the same host names. Browsers and clients will not trust it;
 * it is for development only.
 */
export async function ensureDevelopmentCertificate(
  folder: string,
  hostnames: readonly string[],
  now: Date = new Date(),
): Promise<CertificateFiles> {
  const certificateFile = path.join(folder, 'development.pem');
  const keyFile = path.join(folder, 'development.key');
  if (await reusable(certificateFile, keyFile, hostnames, now)) {
    makeFilePrivate(keyFile);
    return { certificateFile, keyFile };
  }
  makePrivateDirectory(folder);
  const names = hostnames.map((name) => (isIP(name) ? `IP:${name}` : `DNS:${name}`));
  // Written beside and renamed, so a crash never leaves a certificate without its key.
  const partial = { cert: `${certificateFile}.partial`, key: `${keyFile}.partial` };
  try {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '90',
      '-subj',
      `/CN=${hostnames[0]}/O=Portcullis development`,
      '-addext',
      `subjectAltName=${names.join(',')}`,
      '-keyout',
      partial.key,
      '-out',
      partial.cert,
    ]);
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'openssl is not installed' : String(error);
    throw new Error(
      `cannot make the development TLS certificate in ${folder} (${reason}); ` +
        'install openssl or set tls.certificate and tls.key',
    );
  }
  await chmod(partial.key, 0o600);
  await rename(partial.key, keyFile);
  await rename(partial.cert, certificateFile);
  return { certificateFile, keyFile };
}

async function reusable(
  certificateFile: string,
  keyFile: string,
  hostnames: readonly string[],
  now: Date,
): Promise<boolean> {
  try {
    const [pem] = await Promise.all([readFile(certificateFile), readFile(keyFile)]);
    const certificate = new X509Certificate(pem);
    if (new Date(certificate.validTo).getTime() - now.getTime() < renewBeforeMs) return false;
    return hostnames.every((name) =>
      isIP(name) ? certificate.checkIP(name) !== undefined : certificate.checkHost(name) !== undefined,
    );
  } catch {
    return false;
  }
}
