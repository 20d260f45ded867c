/**
 * The client certificate of a request, from what Envoy says about the TLS connection: the ext_proc attributes
 * `connection.mtls` and `connection.peer_certificate` (the URL-encoded PEM). Nothing here reads a request header,
 * so a client cannot claim a certificate it did not present in the handshake.
 */
import { X509Certificate } from 'node:crypto';
import { thumbprintOf } from '../certificate-thumbprint.js';
import { requestAttributes } from '../envoy/contract.js';
import { dotNetName, nameAttributes } from '../expr/index.js';
import type { AttributeValue } from '../extproc/headers.js';
import type { ClientCertificate } from '../policy/elements/validate-client-certificate.js';

/** The ext_proc request attributes this module reads (Envoy must be configured to send them). */
export const certificateAttributes = ['connection.mtls', 'connection.peer_certificate'] as const;

export interface TrustedAuthority {
  readonly certificate: X509Certificate;
  readonly thumbprint: string;
  /** Its id in the gateway's certificate store (tls.certificates), when it came from there. */
  readonly id: string | null;
}

/** The client CAs validate-trust checks against, and the revocation lists known for them. */
export interface TrustStore {
  readonly authorities: readonly TrustedAuthority[];
  /** Revoked serial numbers (upper-case hex, no leading zeros) by issuer thumbprint; an issuer without one has no list. */
  readonly revoked?: ReadonlyMap<string, ReadonlySet<string>>;
}

export const emptyTrustStore: TrustStore = { authorities: [] };

/**
 * A trust store from PEM text (a bundle may hold several certificates): the client CA file, and the store's
 * certificates by id. Called once at start.
 */
export function trustStore(
  sources: readonly { readonly pem: string; readonly id?: string }[],
  revoked?: ReadonlyMap<string, ReadonlySet<string>>,
): TrustStore {
  const authorities = sources.flatMap((source) =>
    splitPem(source.pem).map((pem) => {
      const certificate = new X509Certificate(pem);
      return { certificate, thumbprint: thumbprintOf(certificate), id: source.id ?? null };
    }),
  );
  return revoked ? { authorities, revoked } : { authorities };
}

/**
 * `context.Request.Certificate` for a request: null when the connection is not mutual TLS or carries no
 * certificate Envoy could print. Pure: the same attributes and trust store always give the same certificate.
 */
export function clientCertificate(
  attributes: ReadonlyMap<string, AttributeValue>,
  trust: TrustStore = emptyTrustStore,
): ClientCertificate | null {
  if (attributes.get(requestAttributes.mtls) !== true) return null;
  const encoded = attributes.get(requestAttributes.peerCertificate);
  if (typeof encoded !== 'string' || encoded === '') return null;
  let certificate: X509Certificate;
  let pem: string;
  try {
    pem = decodeURIComponent(encoded);
    certificate = new X509Certificate(pem);
  } catch {
    // Envoy only prints certificates it parsed; a value that does not parse is treated as no certificate.
    return null;
  }
  const issuer = trust.authorities.find(
    (authority) =>
      certificate.checkIssued(authority.certificate) && certificate.verify(authority.certificate.publicKey),
  );
  const serialNumber = certificate.serialNumber.toUpperCase();
  const revokedList = issuer ? trust.revoked?.get(issuer.thumbprint) : undefined;
  return {
    pem,
    raw: certificate.raw,
    thumbprint: thumbprintOf(certificate),
    serialNumber,
    subject: dotNetName(certificate.subject),
    issuer: dotNetName(certificate.issuer),
    commonName: nameAttributes(certificate.subject).find(([key]) => key === 'CN')?.[1] ?? null,
    dnsNames: subjectAltNames(certificate.subjectAltName, 'DNS'),
    notBefore: new Date(certificate.validFrom),
    notAfter: new Date(certificate.validTo),
    trusted: issuer !== undefined,
    issuerThumbprint: issuer?.thumbprint ?? null,
    issuerCertificateId: issuer?.id ?? null,
    revoked: revokedList === undefined ? undefined : revokedList.has(serialNumber.replace(/^0+(?=.)/, '')),
  };
}

/** Values of one kind from Node's subjectAltName text (`DNS:a.example, IP Address:10.0.0.1`). */
function subjectAltNames(text: string | undefined, kind: string): string[] {
  if (!text) return [];
  return text
    .split(/,\s*/)
    .filter((entry) => entry.startsWith(`${kind}:`))
    .map((entry) => entry.slice(kind.length + 1));
}

function splitPem(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}
