import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { getCACertificates, setDefaultCACertificates, type TLSSocket } from 'node:tls';
import type { CertificateAuthority, CertificateWorkshop } from '../processes/certificates.js';

/**
 * A partner service over HTTPS that requires a client certificate issued by its own client CA (mutual TLS) and
 * answers with that certificate's CN: what side requests present a certificate to (send-request's
 * authentication-certificate). The engine runs in the test's process, so the partner's server CA is trusted
 * process-wide, as an operator's NODE_EXTRA_CA_CERTS would make it, until `close`.
 */
export interface MutualTlsPartner {
  /** `https://127.0.0.1:<port>/whoami`. */
  readonly url: string;
  /** Issues the client certificates the partner accepts. */
  readonly clientCa: CertificateAuthority;
  /** TLS handshakes completed so far (a kept connection is one). */
  readonly handshakes: number;
  close(): Promise<void>;
}

export async function startMutualTlsPartner(workshop: CertificateWorkshop): Promise<MutualTlsPartner> {
  const serverCa = await workshop.authority('server-ca', '/CN=Server CA');
  const clientCa = await workshop.authority('client-ca', '/CN=Client CA');
  const server = await serverCa.issue({
    name: 'partner',
    subject: '/CN=partner',
    ips: ['127.0.0.1'],
    usage: 'server',
  });
  const partner = createServer(
    { cert: server.pem, key: server.key, ca: clientCa.pem, requestCert: true, rejectUnauthorized: true },
    (request, response) =>
      response.end((request.socket as TLSSocket).getPeerCertificate().subject?.CN ?? 'none'),
  );
  let handshakes = 0;
  partner.on('secureConnection', () => handshakes++);
  await new Promise<void>((resolve) => partner.listen(0, '127.0.0.1', resolve));
  const defaultCas = getCACertificates('default');
  setDefaultCACertificates([...defaultCas, serverCa.pem]);
  return {
    url: `https://127.0.0.1:${(partner.address() as AddressInfo).port}/whoami`,
    clientCa,
    get handshakes() {
      return handshakes;
    },
    async close() {
      setDefaultCACertificates(defaultCas);
      partner.closeAllConnections();
      await new Promise((resolve) => partner.close(resolve));
    },
  };
}
