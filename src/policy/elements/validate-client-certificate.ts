import type { CertificateModel } from '../../expr/index.js';
import { type CompileContext, defineElement } from '../element.js';
import type { NodeOf } from '../node.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { ALL_SCOPES, bool, type ChildSpec, each, elements, str } from '../schema.js';

/**
 * The client certificate of the TLS connection, as policies see it (`context.Request.Certificate`, API
 * Management's X509Certificate2). The transport builds it from what Envoy reports about the connection — never from
 * a request header — and decides `trusted` against the configured client CAs.
 */
/** The client certificate as the transport describes it (expressions see it as X509Certificate2). */
export type ClientCertificate = CertificateModel;

export function isClientCertificate(value: unknown): value is ClientCertificate {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ClientCertificate).thumbprint === 'string' &&
    (value as ClientCertificate).notAfter instanceof Date
  );
}

/** How a DN is compared: RDNs split on unescaped commas, trimmed, attribute names upper-cased. */
export function normalizeDistinguishedName(name: string): string {
  return name
    .split(/(?<!\\),/)
    .map((part) => {
      const [key, ...value] = part.split('=');
      return `${key!.trim().toUpperCase()}=${value.join('=').trim()}`;
    })
    .join(', ');
}

const hex = (text: string) => text.replace(/[\s:]/g, '').toUpperCase();
/** Serial numbers compare as numbers: leading zeros (DER adds one to keep a number positive) do not matter. */
const serial = (text: string) => hex(text).replace(/^0+(?=.)/, '');

type Claim = (certificate: ClientCertificate, expected: string) => boolean;

/** One identity's claims, by attribute; an identity matches when every claim it lists does. */
const CLAIMS = {
  thumbprint: (c, v) => c.thumbprint === hex(v),
  'serial-number': (c, v) => serial(c.serialNumber) === serial(v),
  'common-name': (c, v) => c.commonName === v,
  subject: (c, v) => normalizeDistinguishedName(c.subject) === normalizeDistinguishedName(v),
  'dns-name': (c, v) => c.dnsNames.some((name) => name.toLowerCase() === v.toLowerCase()),
  'issuer-subject': (c, v) => normalizeDistinguishedName(c.issuer) === normalizeDistinguishedName(v),
  'issuer-thumbprint': (c, v) => c.issuerThumbprint === hex(v),
  'issuer-certificate-id': (c, v) => c.issuerCertificateId === v,
} as const satisfies Readonly<Record<string, Claim>>;
type ClaimName = keyof typeof CLAIMS;
const CLAIM_NAMES = Object.keys(CLAIMS) as readonly ClaimName[];

const IDENTITY = {
  name: 'identity',
  max: 10,
  attributes: each(CLAIM_NAMES, str({ expression: false })),
} as const satisfies ChildSpec;

type Check = (certificate: ClientCertificate, now: number) => PolicyError | undefined;

const refuse = (reason: string, message: string) => new PolicyError(reason, message, 403, 'Forbidden');

type RuleAttribute = 'validate-not-before' | 'validate-not-after' | 'validate-trust' | 'validate-revocation';

/** The top-level rules, each on by default and switched off by its attribute, in the order they are checked. */
const RULES: readonly { readonly attribute: RuleAttribute; readonly check: Check }[] = [
  {
    attribute: 'validate-not-before',
    check: (c, now) =>
      now < c.notBefore.getTime()
        ? refuse(
            'ClientCertificateNotYetValid',
            `The client certificate is not valid before ${c.notBefore.toISOString()}.`,
          )
        : undefined,
  },
  {
    attribute: 'validate-not-after',
    check: (c, now) =>
      now > c.notAfter.getTime()
        ? refuse('ClientCertificateExpired', `The client certificate expired at ${c.notAfter.toISOString()}.`)
        : undefined,
  },
  {
    attribute: 'validate-trust',
    check: (c) =>
      c.trusted
        ? undefined
        : refuse(
            'ClientCertificateUntrusted',
            'The client certificate does not chain to a trusted certificate authority.',
          ),
  },
  {
    attribute: 'validate-revocation',
    // Only the revocation lists the gateway knows are checked; a certificate no list speaks of passes.
    check: (c) =>
      c.revoked === true
        ? refuse('ClientCertificateRevoked', 'The client certificate has been revoked.')
        : undefined,
  },
];

function compileIdentity(identity: NodeOf<typeof IDENTITY>, c: CompileContext) {
  const claims = CLAIM_NAMES.filter((attribute) => identity.has(attribute)).map((attribute) => {
    const claim: Claim = CLAIMS[attribute];
    const value = identity.literal(attribute) ?? '';
    return (certificate: ClientCertificate) => claim(certificate, value);
  });
  if (claims.length === 0) {
    c.error(
      identity,
      'attribute',
      `validate-client-certificate/identities/identity needs at least one of ${Object.keys(CLAIMS).join(', ')}`,
    );
  }
  return (certificate: ClientCertificate) => claims.every((claim) => claim(certificate));
}

/**
 * Checks the client certificate of the connection: its validity period, its chain to a trusted CA, revocation, and
 * that it matches at least one of the listed identities. A failure goes to on-error (403) unless ignore-error.
 */
export const validateClientCertificate = defineElement({
  name: 'validate-client-certificate',
  summary: 'Validates the client certificate of the connection (dates, trust, revocation, identities).',
  sections: ['inbound'],
  scopes: ALL_SCOPES,
  attributes: {
    'validate-revocation': bool({ expression: false, default: true }),
    'validate-trust': bool({ expression: false, default: true }),
    'validate-not-before': bool({ expression: false, default: true }),
    'validate-not-after': bool({ expression: false, default: true }),
    'ignore-error': bool({ expression: false, default: false }),
  },
  content: elements({
    name: 'identities',
    max: 1,
    content: elements(IDENTITY),
  }),
  compile(node, c) {
    const rules = RULES.filter((rule) => node.literal(rule.attribute) !== false).map((rule) => rule.check);
    const ignoreError = node.literal('ignore-error') === true;
    const identities = (node.child('identities')?.childrenNamed('identity') ?? []).map((identity) =>
      compileIdentity(identity, c),
    );
    const validate = (run: RunContext): PolicyError | undefined => {
      const certificate = run.context.request.certificate;
      if (!isClientCertificate(certificate)) {
        return refuse('ClientCertificateMissing', 'The request carries no client certificate.');
      }
      const now = run.services.clock.now();
      for (const rule of rules) {
        const failure = rule(certificate, now);
        if (failure) return failure;
      }
      if (identities.length > 0 && !identities.some((identity) => identity(certificate))) {
        return refuse(
          'ClientCertificateIdentityMismatch',
          `The client certificate (${certificate.subject}, thumbprint ${certificate.thumbprint}) matches none of the allowed identities.`,
        );
      }
      return undefined;
    };
    return (run) => {
      const failure = validate(run);
      if (failure && !ignoreError) throw failure;
      return 'next';
    };
  },
});
