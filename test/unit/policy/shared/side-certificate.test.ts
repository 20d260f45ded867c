import { describe, expect, it } from 'vitest';
import { PolicyLoadError } from '../../../../src/policy/diagnostics.js';
import { compilePolicyDocument, readPolicyDocument } from '../../../../src/policy/document.js';
import type { CertificateKeys, ClientCertificate } from '../../../../src/policy/index.js';
import { fakeServices, inbound, policies } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

/**
 * send-request's and send-one-way-request's `<authentication-certificate thumbprint | certificate-id | body
 * password/>` (learn.microsoft.com/azure/api-management/authentication-certificate-policy): the engine sends side
 * requests itself, so the certificate goes with the request to the engine's fetch, which presents it.
 */

const STORED: ClientCertificate = {
  kind: 'pem',
  certificate: '-----BEGIN CERTIFICATE-----',
  key: '-----BEGIN PRIVATE KEY-----',
  poolKey: 'store:partner',
  label: 'certificate "partner"',
};
const THUMBPRINT = 'A1B2C3D4E5F60718293A4B5C6D7E8F9012345678';

function withStore() {
  const certificateKeys: CertificateKeys = {
    privateKey: () => undefined,
    clientCertificate: (which) =>
      ('id' in which ? which.id === 'partner' : which.thumbprint === THUMBPRINT) ? STORED : undefined,
  };
  return Object.assign(fakeServices(), { certificateKeys });
}

const sendRequest = (certificate: string) =>
  `<send-request response-variable-name="r"><set-url>https://partner.example.com/</set-url>${certificate}</send-request>`;

describe('authentication-certificate in a side request: load-time checks', () => {
  it('accepts each of thumbprint, certificate-id and body (with or without password)', () => {
    for (const attributes of [
      `thumbprint="${THUMBPRINT}"`,
      'thumbprint="a1:b2:c3:d4:e5:f6:07:18:29:3a:4b:5c:6d:7e:8f:90:12:34:56:78"',
      'certificate-id="partner"',
      'certificate-id="@((string)context.Variables[&quot;id&quot;])"',
      'body="@(Convert.FromBase64String(&quot;AA==&quot;))"',
      'body="@(Convert.FromBase64String(&quot;AA==&quot;))" password="p"',
    ]) {
      expect(diagnosticsOf(sendRequest(`<authentication-certificate ${attributes} />`))).toEqual([]);
    }
    expect(
      diagnosticsOf(
        '<send-one-way-request><set-url>https://x/</set-url><authentication-certificate certificate-id="partner" /></send-one-way-request>',
      ),
    ).toEqual([]);
  });

  it('needs exactly one of thumbprint, certificate-id and body', () => {
    expect(diagnosticsOf(sendRequest('<authentication-certificate />'))).toEqual([
      'policies/inbound/send-request[1]/authentication-certificate[2]: authentication-certificate needs exactly one of thumbprint, certificate-id and body, got none',
    ]);
    expect(
      diagnosticsOf(
        sendRequest(`<authentication-certificate certificate-id="partner" thumbprint="${THUMBPRINT}" />`),
      ),
    ).toEqual([
      'policies/inbound/send-request[1]/authentication-certificate[2]: authentication-certificate needs exactly one of thumbprint, certificate-id and body, got @thumbprint and @certificate-id',
    ]);
  });

  it('takes a password only with a body, and a thumbprint only as 40 hexadecimal digits', () => {
    expect(
      diagnosticsOf(sendRequest('<authentication-certificate certificate-id="partner" password="p" />')),
    ).toEqual([
      'policies/inbound/send-request[1]/authentication-certificate[2]: authentication-certificate/@password goes with @body (a PKCS #12 blob), got no body',
    ]);
    expect(diagnosticsOf(sendRequest('<authentication-certificate thumbprint="A1B2" />'))).toEqual([
      'policies/inbound/send-request[1]/authentication-certificate[2]: authentication-certificate/@thumbprint must be a SHA-1 thumbprint (40 hexadecimal digits), got "A1B2"',
    ]);
  });

  it('tells the compile which certificates of the store it can use: one by its literal id, any by thumbprint', () => {
    const used = (certificate: string) => {
      const ids: (string | undefined)[] = [];
      compilePolicyDocument(
        readPolicyDocument(policies({ inbound: sendRequest(certificate) }), {
          file: 'api.xml',
          namedValues: new Map(),
        }),
        { scope: 'api', usesCertificate: (id) => ids.push(id) },
      );
      return ids;
    };
    expect(used('<authentication-certificate certificate-id="partner" />')).toEqual(['partner']);
    expect(used(`<authentication-certificate thumbprint="${THUMBPRINT}" />`)).toEqual([undefined]);
    expect(
      used('<authentication-certificate certificate-id="@((string)context.Variables[&quot;id&quot;])" />'),
    ).toEqual([undefined]);
    expect(
      used('<authentication-certificate body="@(Convert.FromBase64String(&quot;AA==&quot;))" />'),
    ).toEqual([]);
  });

  it('refuses, at file:line:col, a certificate-id the gateway’s certificate store does not have', () => {
    const xml = policies({
      inbound: sendRequest('\n  <authentication-certificate certificate-id="missing" />\n'),
    });
    const compile = () =>
      compilePolicyDocument(readPolicyDocument(xml, { file: 'api.xml', namedValues: new Map() }), {
        scope: 'api',
        certificateIds: new Set(['partner']),
      });
    expect(compile).toThrow(PolicyLoadError);
    try {
      compile();
    } catch (err) {
      const [d] = (err as PolicyLoadError).diagnostics;
      // The line of <authentication-certificate> (policies() puts <inbound> on a line of its own).
      expect([d!.file, d!.line]).toEqual([
        'api.xml',
        xml.split('\n').findIndex((l) => l.includes('missing')) + 1,
      ]);
      expect(d!.message).toBe(
        'authentication-certificate/@certificate-id must name a certificate of tls.certificates, got "missing" (known: partner)',
      );
    }
  });
});

describe('authentication-certificate in a side request: running', () => {
  it('hands the store’s certificate, by id or by thumbprint, to the fetch with the request', async () => {
    for (const attributes of [
      'certificate-id="partner"',
      'thumbprint="a1:b2:c3:d4:e5:f6:07:18:29:3a:4b:5c:6d:7e:8f:90:12:34:56:78"',
    ]) {
      const services = withStore();
      services.route('https://partner.example.com/', { status: 200 });
      const { context } = await inbound(
        sendRequest(`<authentication-certificate ${attributes} />`),
        {},
        services,
      );
      expect(context.lastError).toBeNull();
      expect(services.fetched[0]?.clientCertificate).toBe(STORED);
    }
  });

  it('sends it with send-one-way-request too', async () => {
    const services = withStore();
    services.route('https://partner.example.com/', { status: 200 });
    await inbound(
      '<send-one-way-request><set-url>https://partner.example.com/</set-url><authentication-certificate certificate-id="partner" /></send-one-way-request>',
      {},
      services,
    );
    expect(services.fetched[0]?.clientCertificate).toBe(STORED);
  });

  it('hands a body on as PKCS #12 with its password, pooled by a digest that holds neither', async () => {
    const services = withStore();
    services.route('https://partner.example.com/', { status: 200 });
    const secret = 'pfx-password-42';
    await inbound(
      sendRequest(
        `<authentication-certificate body="@(Convert.FromBase64String(&quot;MIIB&quot;))" password="${secret}" />`,
      ),
      {},
      services,
    );
    const presented = services.fetched[0]?.clientCertificate;
    expect(presented).toMatchObject({ kind: 'pfx', pfx: Buffer.from('MIIB', 'base64'), passphrase: secret });
    expect(presented?.poolKey).toMatch(/^pfx:[A-Za-z0-9_-]{43}$/);
    expect(presented?.poolKey).not.toContain(secret);
  });

  it('fails into on-error, before sending, for a certificate the store does not have', async () => {
    const services = withStore();
    const { context, outcome } = await inbound(
      sendRequest('<authentication-certificate certificate-id="@(&quot;elsewhere&quot;)" />'),
      {},
      services,
    );
    expect(context.lastError).toMatchObject({
      source: 'send-request',
      reason: 'CertificateNotFound',
      message: 'authentication-certificate: no certificate "elsewhere" in tls.certificates',
    });
    expect(outcome.kind === 'respond' && outcome.response.status).toBe(500);
    expect(services.fetched).toEqual([]);
  });

  it('fails as an expression evaluation failure when body is not a byte[]', async () => {
    const { context } = await inbound(
      sendRequest('<authentication-certificate body="@(&quot;not bytes&quot;)" />'),
      {},
      withStore(),
    );
    expect(context.lastError?.reason).toBe('ExpressionValueEvaluationFailure');
    expect(context.lastError?.message).toContain('authentication-certificate/@body must be a byte[]');
  });

  it('tells a trace that body and password are credentials, so it never shows them', async () => {
    const heard: { label: string; credential: boolean }[] = [];
    const services = Object.assign(withStore(), {
      observer: {
        observes: () => true,
        runStarted: () => {},
        statementStarted: () => {},
        statementEnded: () => {},
        branchTaken: () => {},
        watch: () => ({
          value: (label: string, _value: unknown, credential: boolean) => heard.push({ label, credential }),
        }),
      },
    });
    services.route('https://partner.example.com/', { status: 200 });
    await inbound(
      sendRequest(
        '<authentication-certificate body="@(Convert.FromBase64String(&quot;MIIB&quot;))" password="@(&quot;p&quot; + &quot;w&quot;)" />',
      ),
      {},
      services,
    );
    expect(heard).toEqual(
      expect.arrayContaining([
        { label: 'authentication-certificate/@body', credential: true },
        { label: 'authentication-certificate/@password', credential: true },
      ]),
    );
  });
});
