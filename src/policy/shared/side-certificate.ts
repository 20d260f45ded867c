/**
 * send-request's and send-one-way-request's `<authentication-certificate>`: the client certificate the engine
 * presents in the TLS handshake of the side request it sends itself (unlike forward-request's, whose handshake is
 * Envoy's): one of the gateway's store (tls.certificates) by `certificate-id` or `thumbprint`, or a PKCS #12 blob
 * (`body`, with its `password`) an expression computed.
 */
import { createHash } from 'node:crypto';
import type { CompileContext } from '../element.js';
import type { ChildNode } from '../node.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { type ChildSpec, elements, str } from '../schema.js';
import type { ClientCertificate } from '../services.js';

/** The child as send-request and send-one-way-request declare it (REQUEST_CHILDREN). */
export const AUTHENTICATION_CERTIFICATE = {
  name: 'authentication-certificate',
  max: 1,
  // https://learn.microsoft.com/azure/api-management/authentication-certificate-policy
  attributes: { thumbprint: str(), 'certificate-id': str(), body: str(), password: str() },
} as const satisfies ChildSpec;

const ALONE = elements(AUTHENTICATION_CERTIFICATE);
type CertificateNode = ChildNode<typeof ALONE, 'authentication-certificate'>;

/** What a thumbprint is written as: SHA-1 hex, colons and spaces allowed (as the Azure portal shows them). */
const hex = (text: string) => text.replace(/[\s:]/g, '').toUpperCase();
const SHA1_HEX = /^[0-9A-F]{40}$/;

/** Compiles the child (undefined when there is none); load-time checks report through `c`. */
export function compileSideCertificate(
  child: CertificateNode | undefined,
  c: CompileContext,
): ((run: RunContext) => ClientCertificate) | undefined {
  if (child === undefined) return undefined;
  const given = (['thumbprint', 'certificate-id', 'body'] as const).filter((name) => child.has(name));
  if (given.length !== 1) {
    c.error(
      child,
      'attribute',
      `authentication-certificate needs exactly one of thumbprint, certificate-id and body, got ${given.length === 0 ? 'none' : given.map((name) => `@${name}`).join(' and ')}`,
    );
    return undefined;
  }
  if (child.has('password') && !child.has('body')) {
    c.error(
      child,
      'attribute',
      'authentication-certificate/@password goes with @body (a PKCS #12 blob), got no body',
    );
  }
  const literalId = child.literal('certificate-id');
  if (typeof literalId === 'string' && c.certificateIds !== undefined && !c.certificateIds.has(literalId)) {
    c.error(
      child,
      'attribute',
      `authentication-certificate/@certificate-id must name a certificate of tls.certificates, got "${literalId}" (known: ${[...c.certificateIds].join(', ') || 'none'})`,
    );
  }
  const literalThumbprint = child.literal('thumbprint');
  if (typeof literalThumbprint === 'string' && !SHA1_HEX.test(hex(literalThumbprint))) {
    c.error(
      child,
      'attribute',
      `authentication-certificate/@thumbprint must be a SHA-1 thumbprint (40 hexadecimal digits), got "${literalThumbprint}"`,
    );
  }
  // A literal id names the one certificate; a thumbprint or a computed id may be any of them.
  if (!child.has('body')) c.usesCertificate(typeof literalId === 'string' ? literalId : undefined);
  const body = child.rawGetter('body', true);
  if (body !== undefined) {
    const password = child.getter('password');
    return (run) => {
      const bytes = body(run);
      if (!(bytes instanceof Uint8Array)) {
        throw new TypeError(
          `authentication-certificate/@body must be a byte[] (a PKCS #12 certificate with its key), got ${bytes === null ? 'null' : typeof bytes}`,
        );
      }
      const pfx = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const passphrase = password?.(run);
      // The pool key is a digest of the blob and its password: equal certificates share connections, and the
      // key (which a heap dump or a debugger may show) holds neither secret.
      const digest = createHash('sha256')
        .update(pfx)
        .update('\0')
        .update(passphrase ?? '')
        .digest('base64url');
      return {
        kind: 'pfx',
        pfx,
        ...(passphrase === undefined ? {} : { passphrase }),
        poolKey: `pfx:${digest}`,
        label: 'the certificate of authentication-certificate/@body',
      };
    };
  }
  const thumbprint = child.getter('thumbprint');
  const certificateId = child.getter('certificate-id');
  return (run) => {
    const which = thumbprint ? { thumbprint: hex(thumbprint(run)) } : { id: certificateId!(run) };
    const found = run.services.certificateKeys?.clientCertificate(which);
    if (found === undefined) {
      throw new PolicyError(
        'CertificateNotFound',
        'thumbprint' in which
          ? `authentication-certificate: no certificate of tls.certificates has thumbprint ${which.thumbprint}`
          : `authentication-certificate: no certificate "${which.id}" in tls.certificates`,
        500,
        'Internal server error',
      );
    }
    return found;
  };
}
