import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Issued {
  readonly certificateFile: string;
  readonly keyFile: string;
  readonly pem: string;
  /** The private key, PEM. */
  readonly key: string;
}

export interface CertificateAuthority extends Issued {
  /** Issues a leaf certificate signed by this CA. */
  issue(options: LeafOptions): Promise<Issued>;
}

export interface LeafOptions {
  readonly name: string;
  readonly subject: string;
  readonly dns?: readonly string[];
  readonly ips?: readonly string[];
  /** Alternative names of other kinds, as openssl writes them: `email:a@example`, `URI:https://example`. */
  readonly otherNames?: readonly string[];
  readonly serial?: string;
  readonly usage: 'client' | 'server';
  /** The leaf's key: EC P-256 (default, quick) or RSA 2048 (RSA-OAEP decryption, RS256 signatures). */
  readonly key?: 'ec' | 'rsa';
}

export interface CertificateWorkshop {
  readonly directory: string;
  authority(name: string, subject: string): Promise<CertificateAuthority>;
  /** A self-signed leaf, signed by nobody the gateway trusts. */
  selfSigned(options: LeafOptions): Promise<Issued>;
  /**
   * `issued` with its key as PKCS #12 (.pfx) under `password`: OpenSSL 3's default encryption (AES-256), or
   * `legacy` (RC2-40 and 3DES, what OpenSSL 1.x and older Windows exports write).
   */
  pkcs12(issued: Issued, password: string, options?: { legacy?: boolean }): Promise<Buffer>;
  remove(): Promise<void>;
}

/** Makes certificates for a test with the system's openssl (EC P-256 keys unless asked: quick to generate). */
export async function certificateWorkshop(): Promise<CertificateWorkshop> {
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-certs-'));
  const file = (name: string) => path.join(directory, name);

  async function leafRequest(options: LeafOptions) {
    const extensions = file(`${options.name}.ext`);
    const names = [
      ...(options.dns ?? []).map((dns) => `DNS:${dns}`),
      ...(options.ips ?? []).map((ip) => `IP:${ip}`),
      ...(options.otherNames ?? []),
    ];
    await writeFile(
      extensions,
      [
        'basicConstraints=CA:FALSE',
        `extendedKeyUsage=${options.usage === 'client' ? 'clientAuth' : 'serverAuth'}`,
        ...(names.length > 0 ? [`subjectAltName=${names.join(',')}`] : []),
      ].join('\n'),
    );
    await run('openssl', [
      'req',
      '-new',
      ...(options.key === 'rsa'
        ? ['-newkey', 'rsa:2048']
        : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256']),
      '-nodes',
      '-keyout',
      file(`${options.name}.key`),
      '-out',
      file(`${options.name}.csr`),
      '-subj',
      options.subject,
    ]);
    return extensions;
  }

  async function issued(name: string): Promise<Issued> {
    const certificateFile = file(`${name}.pem`);
    const keyFile = file(`${name}.key`);
    return {
      certificateFile,
      keyFile,
      pem: await readFile(certificateFile, 'utf8'),
      key: await readFile(keyFile, 'utf8'),
    };
  }

  return {
    directory,
    async authority(name, subject) {
      await run('openssl', [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '2',
        '-subj',
        subject,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
        '-keyout',
        file(`${name}.key`),
        '-out',
        file(`${name}.pem`),
      ]);
      const ca = await issued(name);
      return {
        ...ca,
        async issue(options) {
          const extensions = await leafRequest(options);
          await run('openssl', [
            'x509',
            '-req',
            '-in',
            file(`${options.name}.csr`),
            '-CA',
            ca.certificateFile,
            '-CAkey',
            ca.keyFile,
            '-set_serial',
            options.serial ?? `0x${Math.floor(Math.random() * 2 ** 48).toString(16)}`,
            '-days',
            '1',
            '-extfile',
            extensions,
            '-out',
            file(`${options.name}.pem`),
          ]);
          return issued(options.name);
        },
      };
    },
    async selfSigned(options) {
      const extensions = await leafRequest(options);
      await run('openssl', [
        'x509',
        '-req',
        '-in',
        file(`${options.name}.csr`),
        '-key',
        file(`${options.name}.key`),
        '-days',
        '1',
        '-extfile',
        extensions,
        '-out',
        file(`${options.name}.pem`),
      ]);
      return issued(options.name);
    },
    async pkcs12(leaf, password, options = {}) {
      const out = file(
        `${path.basename(leaf.certificateFile, '.pem')}-${options.legacy ? 'legacy' : 'aes'}.p12`,
      );
      await run('openssl', [
        'pkcs12',
        '-export',
        ...(options.legacy ? ['-legacy'] : []),
        '-in',
        leaf.certificateFile,
        '-inkey',
        leaf.keyFile,
        '-passout',
        `pass:${password}`,
        '-out',
        out,
      ]);
      return readFile(out);
    },
    remove: () => rm(directory, { recursive: true, force: true }),
  };
}
