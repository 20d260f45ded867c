/**
 * A certificate's thumbprint as API Management shows it (`context.Request.Certificate.Thumbprint`, a certificate's
 * `thumbprint` in the portal and in authentication-certificate): SHA-1 of the DER, upper-case hex. One place, below
 * the modules: the engine names client and side certificates by it, and the expression library's certificates built
 * from bytes carry it, and the expression language may import no module.
 */
import { createHash, type X509Certificate } from 'node:crypto';

export function thumbprintOf(certificate: X509Certificate): string {
  return createHash('sha1').update(certificate.raw).digest('hex').toUpperCase();
}
