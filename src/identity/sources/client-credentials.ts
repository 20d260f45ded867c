import { createHash, createPrivateKey, type KeyObject, randomBytes, X509Certificate } from 'node:crypto';
import { importJWK, importPKCS8, type JWK, SignJWT } from 'jose';
import { IdentityError } from '../errors.js';
import type { IdentitySourceConfig } from '../options.js';
import { readSecret } from '../secrets.js';
import { callTokenEndpoint, resourceParameters } from '../token-endpoint.js';
import type { TokenSource } from '../token-source.js';
import type { SourceContext } from './context.js';

type Config = Extract<IdentitySourceConfig, { type: 'client-credentials' }>;

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/**
 * The OAuth 2.0 client credentials grant (RFC 6749 §4.4) at any token endpoint, the client authenticated with a
 * secret (HTTP Basic or in the form) or a private-key JWT (RFC 7523 §2.2, OpenID Connect `private_key_jwt`).
 */
export function clientCredentialsSource(config: Config, context: SourceContext): TokenSource {
  const what = `identity "${context.name}"`;
  return {
    actsForAnyClientId: false,
    async fetch({ resource }) {
      const form = new URLSearchParams([
        ['grant_type', 'client_credentials'],
        ...resourceParameters(resource, config.resourceAs, config.scopes),
        ...Object.entries(config.parameters),
      ]);
      const headers = await authenticateClient(config, context, form);
      return callTokenEndpoint(
        { label: what, url: config.tokenUrl, method: 'POST', headers, form },
        context.now(),
      );
    },
  };
}

/**
 * Adds the client's authentication to a token request (RFC 6749 §2.3: HTTP Basic or the form; RFC 7523 §2.2: a
 * private-key JWT): the form gets its fields, the headers to send are returned.
 */
export async function authenticateClient(
  config: Config,
  context: SourceContext,
  form: URLSearchParams,
): Promise<Record<string, string>> {
  const what = `identity "${context.name}"`;
  const headers: Record<string, string> = {};
  switch (config.clientAuth) {
    case 'client_secret_basic': {
      const secret = await readSecret(config.clientSecret!, context.directory, `${what} clientSecret`);
      // RFC 6749 §2.3.1: both parts form-urlencoded before Base64.
      const pair = `${formEncode(config.clientId)}:${formEncode(secret)}`;
      headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
      break;
    }
    case 'client_secret_post':
      form.set('client_id', config.clientId);
      form.set(
        'client_secret',
        await readSecret(config.clientSecret!, context.directory, `${what} clientSecret`),
      );
      break;
    case 'private_key_jwt':
      form.set('client_id', config.clientId);
      form.set('client_assertion_type', ASSERTION_TYPE);
      form.set('client_assertion', await clientAssertion(config, context, what));
      break;
  }
  return headers;
}

const formEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');

const PRIVATE_KEY_BLOCK = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/;
const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/**
 * A short-lived JWT signed with the client's key: iss = sub = client id, aud = the token endpoint. When the key
 * comes with its X.509 certificate (in the same PEM, or `certificate`), the header carries the certificate's
 * thumbprints: Entra ID finds a certificate credential by `x5t` (or `x5t#S256`), not by `kid`.
 */
async function clientAssertion(config: Config, context: SourceContext, what: string): Promise<string> {
  const text = await readSecret(config.privateKey!, context.directory, `${what} privateKey`);
  const alg = config.privateKeyAlgorithm;
  const isJwk = text.startsWith('{');
  const pem = isJwk ? undefined : (PRIVATE_KEY_BLOCK.exec(text)?.[0] ?? text);
  let key: Awaited<ReturnType<typeof importPKCS8>>;
  try {
    key = isJwk
      ? ((await importJWK(JSON.parse(text) as JWK, alg)) as typeof key)
      : await importPKCS8(pem!, alg);
  } catch (error) {
    throw new IdentityError(
      'unavailable',
      `${what}: privateKey is not a PKCS#8 PEM or JWK ${alg} private key (${(error as Error).message})`,
    );
  }
  const certificatePem =
    config.certificate !== undefined
      ? await readSecret(config.certificate, context.directory, `${what} certificate`)
      : isJwk
        ? undefined
        : CERTIFICATE_BLOCK.exec(text)?.[0];
  const thumbprints =
    certificatePem === undefined
      ? {}
      : certificateThumbprints(
          certificatePem,
          isJwk ? createPrivateKey({ key: JSON.parse(text) as JWK, format: 'jwk' }) : createPrivateKey(pem!),
          config.certificateThumbprints,
          what,
        );
  const iat = Math.floor(context.now() / 1000);
  return new SignJWT({ jti: randomBytes(16).toString('base64url') })
    .setProtectedHeader({
      alg,
      typ: 'JWT',
      ...(config.keyId ? { kid: config.keyId } : {}),
      ...thumbprints,
      ...(config.x5t ? { x5t: config.x5t } : {}),
    })
    .setIssuer(config.clientId)
    .setSubject(config.clientId)
    .setAudience(config.tokenUrl)
    .setIssuedAt(iat)
    .setNotBefore(iat)
    .setExpirationTime(iat + 120)
    .sign(key);
}

/**
 * The certificate's thumbprint headers (RFC 7515 §4.1.7-8: base64url of the SHA-1 / SHA-256 digest of its DER),
 * once it is known to be the private key's: a thumbprint of another certificate would only make the provider
 * look for the wrong credential.
 */
function certificateThumbprints(
  pem: string,
  privateKey: KeyObject,
  wanted: Config['certificateThumbprints'],
  what: string,
): Record<string, string> {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pem);
  } catch (error) {
    throw new IdentityError(
      'unavailable',
      `${what}: the certificate is not an X.509 PEM certificate (${(error as Error).message})`,
    );
  }
  if (!certificate.checkPrivateKey(privateKey))
    throw new IdentityError(
      'unavailable',
      `${what}: the certificate (subject ${certificate.subject.replace(/\n/g, ', ')}) is not privateKey's: its public key is another`,
    );
  const digest = (algorithm: string) => createHash(algorithm).update(certificate.raw).digest('base64url');
  return Object.fromEntries(wanted.map((header) => [header, digest(header === 'x5t' ? 'sha1' : 'sha256')]));
}
