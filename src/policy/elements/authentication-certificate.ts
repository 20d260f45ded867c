import { defineElement } from '../element.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { ALL_SCOPES, EMPTY, str } from '../schema.js';
import type { PolicyServices } from '../services.js';

/** A certificate of the gateway's store (tls.certificates) that Envoy presents to a backend. */
export interface PresentedCertificate {
  readonly id: string;
  /** SHA-1 of the DER bytes, upper-case hex. */
  readonly thumbprint: string;
}

/**
 * Which client certificate Envoy presents to each backend (tls.backends): the TLS handshake is Envoy's, so the
 * certificate is part of the backend's cluster, fixed when the gateway starts.
 */
export interface BackendCertificates {
  /** By named backend id (set-backend-service backend-id) or, for an API's own backend, by API id. */
  presented(target: {
    readonly backendId?: string;
    readonly apiId?: string;
  }): PresentedCertificate | undefined;
}

/** The services with the backend certificate table, when the engine was given one. */
type WithBackendCertificates = PolicyServices & { readonly backendCertificates?: BackendCertificates };

const hex = (text: string) => text.replace(/[\s:]/g, '').toUpperCase();

/**
 * Authenticates to the backend with a client certificate. Envoy makes the backend's TLS connections, so the
 * certificate is configured per backend (tls.backends); this element names the one the policy expects, and refuses
 * (500, before anything reaches the backend) a request whose backend would not present it — a policy and a
 * configuration that disagree never send a request without the certificate the backend requires.
 */
export const authenticationCertificate = defineElement({
  name: 'authentication-certificate',
  summary: 'Presents a client certificate (configured per backend in tls.backends) to the backend.',
  sections: ['inbound'],
  scopes: ALL_SCOPES,
  attributes: {
    thumbprint: str(),
    'certificate-id': str(),
    body: str(),
    password: str(),
  },
  content: EMPTY,
  compile(node, c) {
    const unsupported = (['body', 'password'] as const).filter((attribute) => node.has(attribute));
    if (unsupported.length > 0) {
      c.error(
        node,
        'not-supported',
        `"authentication-certificate" with ${unsupported.map((a) => `@${a}`).join(' and ')} is not supported: Envoy ` +
          'presents backend certificates from the configuration (tls.certificates, tls.backends); name one with ' +
          'certificate-id or thumbprint',
      );
    }
    const thumbprint = node.getter('thumbprint');
    const certificateId = node.getter('certificate-id');
    const fromBody = node.has('body');
    if (!fromBody && (thumbprint === undefined) === (certificateId === undefined)) {
      c.error(
        node,
        'attribute',
        'authentication-certificate needs exactly one of thumbprint and certificate-id',
      );
    }
    const wanted = (run: RunContext) =>
      thumbprint
        ? {
            label: `thumbprint ${hex(thumbprint(run))}`,
            matches: (p: PresentedCertificate) => p.thumbprint === hex(thumbprint(run)),
          }
        : {
            label: `certificate "${certificateId!(run)}"`,
            matches: (p: PresentedCertificate) => p.id === certificateId!(run),
          };
    return (run) => {
      const target = run.backend.backendId
        ? { backendId: run.backend.backendId }
        : { apiId: run.context.api.id };
      const name = target.backendId ? `backend "${target.backendId}"` : `API "${target.apiId}"`;
      const key = target.backendId ?? target.apiId;
      const table = (run.services as WithBackendCertificates).backendCertificates;
      const presented = table?.presented(target);
      const expected = wanted(run);
      if (presented === undefined || !expected.matches(presented)) {
        throw new PolicyError(
          'BackendCertificateNotConfigured',
          `authentication-certificate wants ${expected.label}, but the ${name} is configured to present ` +
            `${presented ? `certificate "${presented.id}"` : 'none'} (tls.backends.${key})`,
          500,
          'Internal server error',
        );
      }
      return 'next';
    };
  },
});
