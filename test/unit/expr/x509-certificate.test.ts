import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  X509Certificate,
} from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure, show, showBlock } from '../../doubles/policy-context.js';
import {
  type CertificateAuthority,
  type CertificateWorkshop,
  certificateWorkshop,
  type Issued,
} from '../../processes/certificates.js';

// X509Certificate, X509Certificate2's further members, X500DistinguishedName, PublicKey, RSACertificateExtensions,
// X509ContentType and X509NameType, on certificates openssl made. Expected values follow the .NET reference pages
// (learn.microsoft.com/dotnet/api/system.security.cryptography.x509certificates.*): Thumbprint/GetCertHashString
// are the SHA-1 of the DER in upper-case hex; GetSerialNumber is "in little-endian order"; GetKeyAlgorithm is the
// OID "1.2.840.113549.1.1.1" and GetKeyAlgorithmParametersString "0500" for RSA (the pages' sample output);
// GetFormat is "X509"; Equals compares issuer and serial number; X509NameType's rules are dotnet/runtime's
// CertificateData.GetNameInfo (CN first for SimpleName, then OU, O, e-mail; alternative names for Dns/Email/Url).
describe('X509 certificates in expressions', () => {
  let workshop: CertificateWorkshop;
  let ca: CertificateAuthority;
  let leaf: Issued;
  let bare: Issued;
  let der: Buffer;

  beforeAll(async () => {
    workshop = await certificateWorkshop();
    ca = await workshop.authority('ca', '/CN=Portcullis Test CA');
    leaf = await ca.issue({
      name: 'leaf',
      subject: '/C=NL/O=Portcullis Test/OU=Gateways/CN=client.example/emailAddress=ops@example.com',
      dns: ['api.example', 'www.example'],
      otherNames: ['email:alt@example.com', 'URI:https://client.example/id'],
      serial: '0x0A1B2C3D',
      usage: 'client',
      key: 'rsa',
    });
    bare = await workshop.selfSigned({ name: 'bare', subject: '/O=Only Org/OU=Only Unit', usage: 'client' });
    der = new X509Certificate(leaf.pem).raw;
  }, 60_000);
  afterAll(() => workshop.remove());

  const cert = (pem = leaf.pem) => `new X509Certificate2(Encoding.ASCII.GetBytes(${JSON.stringify(pem)}))`;
  const base = () => `new X509Certificate(Convert.FromBase64String("${der.toString('base64')}"))`;

  it('reads the base class members', () => {
    const sha1 = createHash('sha1').update(der).digest('hex').toUpperCase();
    expect(show(`${base()}.GetCertHashString()`)).toBe(sha1);
    expect(show(`${cert()}.GetCertHashString(HashAlgorithmName.SHA256)`)).toBe(
      createHash('sha256').update(der).digest('hex').toUpperCase(),
    );
    expect(show(`${base()}.GetSerialNumberString()`)).toBe('0A1B2C3D');
    expect(show(`string.Join(",", ${base()}.GetSerialNumber())`)).toBe('61,44,27,10');
    expect(show(`${base()}.GetKeyAlgorithm()`)).toBe('1.2.840.113549.1.1.1');
    expect(show(`${base()}.GetKeyAlgorithmParametersString()`)).toBe('0500');
    expect(show(`${base()}.GetFormat()`)).toBe('X509');
    expect(show(`${base()}.GetRawCertDataString()`)).toBe(der.toString('hex').toUpperCase());
    expect(show(`${base()}.Subject`)).toBe(
      'E=ops@example.com, CN=client.example, OU=Gateways, O=Portcullis Test, C=NL',
    );
    const pkcs1 = createPublicKey(leaf.pem).export({ format: 'der', type: 'pkcs1' });
    expect(show(`${base()}.GetPublicKeyString()`)).toBe(pkcs1.toString('hex').toUpperCase());
  });

  // GetEffectiveDateString/GetExpirationDateString: NotBefore/NotAfter "in local time" (the reference pages), which
  // is UTC on the gateway, formatted as DateTime.ToString() formats them.
  it('prints the validity dates as DateTime.ToString() does', () => {
    expect(show(`${cert()}.GetEffectiveDateString() == ${cert()}.NotBefore.ToString()`)).toBe('True');
    expect(show(`${base()}.GetExpirationDateString() == ${cert()}.NotAfter.ToString()`)).toBe('True');
  });

  it('keeps the base class apart from X509Certificate2', () => {
    expect(show(`${base()} is X509Certificate2`)).toBe('False');
    expect(show(`${cert()} is X509Certificate`)).toBe('True');
    expect(show(`new X509Certificate2(${base()}) is X509Certificate2`)).toBe('True');
    expect(failure(`${base()}.Thumbprint`)).not.toBe('no error');
  });

  it("Equals compares issuer and serial number; GetHashCode is the thumbprint's first four bytes", () => {
    expect(show(`${base()}.Equals(${cert()})`)).toBe('True');
    expect(show(`${cert()}.Equals(${cert(bare.pem)})`)).toBe('False');
    expect(show(`${cert()}.GetHashCode()`)).toBe(
      String(createHash('sha1').update(der).digest().readInt32BE(0)),
    );
  });

  it('exports X509ContentType.Cert and reads content types', () => {
    expect(show(`${cert()}.Export(X509ContentType.Cert).Length`)).toBe(String(der.length));
    expect(show(`X509Certificate2.GetCertContentType(${cert()}.RawData).ToString()`)).toBe('Cert');
    expect(show('X509Certificate2.GetCertContentType(new byte[] { 1, 2, 3 }).ToString()')).toBe('Unknown');
    expect(failure(`${cert()}.Export(X509ContentType.Pfx)`)).toContain('NotSupportedException');
    expect(show('(int)X509ContentType.Pkcs12 == (int)X509ContentType.Pfx')).toBe('True');
  });

  it('X509Certificate2: names, version, signature algorithm', () => {
    expect(show(`${cert()}.SubjectName.Name == ${cert()}.Subject`)).toBe('True');
    expect(show(`${cert()}.IssuerName.Name`)).toBe('CN=Portcullis Test CA');
    expect(show(`${cert()}.Version`)).toBe('3');
    // openssl signs with ECDSA over SHA-256 for an EC authority.
    expect(show(`${cert()}.SignatureAlgorithm.Value`)).toBe('1.2.840.10045.4.3.2');
    expect(show(`${cert()}.SignatureAlgorithm.FriendlyName`)).toBe('sha256ECDSA');
  });

  it.each([
    ['SimpleName, false', 'client.example'],
    ['SimpleName, true', 'Portcullis Test CA'],
    ['DnsName, false', 'api.example'],
    ['DnsFromAlternativeName, false', 'api.example'],
    ['EmailName, false', 'alt@example.com'],
    ['UrlName, false', 'https://client.example/id'],
    ['UpnName, false', ''],
    ['DnsName, true', 'Portcullis Test CA'],
    ['DnsFromAlternativeName, true', ''],
  ])('GetNameInfo(X509NameType.%s) is %j', (args, expected) => {
    const [type, forIssuer] = args.split(', ');
    expect(show(`${cert()}.GetNameInfo(X509NameType.${type}, ${forIssuer})`)).toBe(expected);
  });

  it('GetNameInfo without a CN: OU before O for SimpleName (the least specific OU), and "" for DnsName', async () => {
    const units = await workshop.selfSigned({
      name: 'units',
      subject: '/O=Org/OU=Outer/OU=Inner',
      usage: 'client',
    });
    expect(show(`${cert(units.pem)}.GetNameInfo(X509NameType.SimpleName, false)`)).toBe('Outer');
    expect(show(`${cert(bare.pem)}.GetNameInfo(X509NameType.SimpleName, false)`)).toBe('Only Unit');
    expect(show(`${cert(bare.pem)}.GetNameInfo(X509NameType.DnsName, false)`)).toBe('');
  });

  it("PublicKey and GetRSAPublicKey verify what the certificate's key signed", () => {
    const signature = sign('sha256', Buffer.from('signed'), createPrivateKey(leaf.key)).toString('base64');
    const verify = (receiver: string) =>
      show(
        `${receiver}.VerifyData(Encoding.UTF8.GetBytes("signed"), Convert.FromBase64String("${signature}"), HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1)`,
      );
    expect(verify(`${cert()}.GetRSAPublicKey()`)).toBe('True');
    expect(verify(`RSACertificateExtensions.GetRSAPublicKey(${cert()})`)).toBe('True');
    expect(verify(`${cert()}.PublicKey.GetRSAPublicKey()`)).toBe('True');
    expect(verify(`((RSA)${cert()}.PublicKey.Key)`)).toBe('True');
    expect(show(`${cert()}.PublicKey.Oid.FriendlyName`)).toBe('RSA');
    expect(show(`${cert()}.PublicKey.ExportSubjectPublicKeyInfo().Length`)).toBe(
      String(createPublicKey(leaf.pem).export({ format: 'der', type: 'spki' }).length),
    );
  });

  it('has no RSA key for an EC certificate, and no private key until CopyWithPrivateKey', () => {
    expect(show(`${cert(bare.pem)}.GetRSAPublicKey() == null`)).toBe('True');
    expect(show(`${cert()}.GetRSAPrivateKey() == null`)).toBe('True');
    expect(failure(`${cert(bare.pem)}.PublicKey.Key`)).toContain('NotSupportedException');
    const withKey = showBlock(
      `var rsa = RSA.Create(); rsa.ImportFromPem(${JSON.stringify(leaf.key)}); var c = ${cert()}.CopyWithPrivateKey(rsa); return c.HasPrivateKey + "," + (c.GetRSAPrivateKey() != null) + "," + (c.PrivateKey is RSA);`,
    );
    expect(withKey).toBe('True,True,True');
    const other = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
      format: 'pem',
      type: 'pkcs8',
    });
    expect(
      failure(
        `var rsa = RSA.Create(); rsa.ImportFromPem(${JSON.stringify(other)}); return ${cert()}.CopyWithPrivateKey(rsa);`,
        'block',
      ),
    ).toContain('The provided key does not match the public key for this certificate.');
  });

  // X500DistinguishedName.Name writes Windows' attribute names (S for the state, E for e-mail: the friendly names
  // of dotnet/runtime's OidLookup table) and quotes a value holding a separator, doubling quotes inside.
  it('writes names as X500DistinguishedName.Name does: .NET attribute names, quoted values', async () => {
    const named = await workshop.selfSigned({
      name: 'named',
      subject: '/C=NL/ST=Zuid-Holland/O=Acme, Inc./CN=say "hi"',
      usage: 'client',
    });
    expect(show(`${cert(named.pem)}.Subject`)).toBe('CN="say ""hi""", O="Acme, Inc.", S=Zuid-Holland, C=NL');
    expect(show(`${cert(named.pem)}.GetNameInfo(X509NameType.SimpleName, false)`)).toBe('say "hi"');
  });

  // X509Certificate.ToString(true) and X509Certificate2.ToString(): dotnet/runtime's summary — [Subject], [Issuer],
  // [Serial Number], [Not Before], [Not After], [Thumbprint], each value on its own line indented by two spaces.
  it('ToString: the type name, or the summary .NET writes', () => {
    const sha1 = createHash('sha1').update(der).digest('hex').toUpperCase();
    const expected = (notBefore: string, notAfter: string) =>
      [
        '[Subject]\n  E=ops@example.com, CN=client.example, OU=Gateways, O=Portcullis Test, C=NL\n',
        '[Issuer]\n  CN=Portcullis Test CA\n',
        '[Serial Number]\n  0A1B2C3D\n',
        `[Not Before]\n  ${notBefore}\n`,
        `[Not After]\n  ${notAfter}\n`,
        `[Thumbprint]\n  ${sha1}\n`,
      ].join('\n');
    const dates = show(`${cert()}.NotBefore.ToString() + "|" + ${cert()}.NotAfter.ToString()`).split('|');
    expect(show(`${cert()}.ToString()`)).toBe(expected(dates[0]!, dates[1]!));
    expect(show(`${base()}.ToString(true)`)).toBe(expected(dates[0]!, dates[1]!));
    expect(show(`${base()}.ToString()`)).toBe(
      'System.Security.Cryptography.X509Certificates.X509Certificate',
    );
    expect(failure(`${cert()}.ToString(true)`)).toContain('NotSupportedException');
  });

  // X509Certificate2.CreateFromPem (learn.microsoft.com/dotnet/api/system.security.cryptography.x509certificates.
  // x509certificate2.createfrompem): the first CERTIFICATE, the first key with an accepted label, which must match.
  it('CreateFromPem reads a certificate and its private key', () => {
    const both = `X509Certificate2.CreateFromPem(${JSON.stringify(leaf.pem)}, ${JSON.stringify(leaf.key)})`;
    expect(show(`${both}.HasPrivateKey`)).toBe('True');
    expect(show(`X509Certificate2.CreateFromPem(${JSON.stringify(leaf.pem)}).HasPrivateKey`)).toBe('False');
    const signature = show(
      `Convert.ToBase64String(${both}.GetRSAPrivateKey().SignData(Encoding.UTF8.GetBytes("m"), HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1))`,
    );
    expect(
      show(
        `${cert()}.GetRSAPublicKey().VerifyData(Encoding.UTF8.GetBytes("m"), Convert.FromBase64String("${signature}"), HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1)`,
      ),
    ).toBe('True');
    expect(
      failure(`X509Certificate2.CreateFromPem(${JSON.stringify(leaf.pem)}, ${JSON.stringify(bare.key)})`),
    ).toContain('CryptographicException');
    expect(failure('X509Certificate2.CreateFromPem("no pem")')).toContain('CryptographicException');
  });

  it('PublicKey.CreateFromSubjectPublicKeyInfo reads the bytes and says how many', () => {
    const spki = createPublicKey(leaf.pem).export({ format: 'der', type: 'spki' });
    expect(
      showBlock(
        `var k = PublicKey.CreateFromSubjectPublicKeyInfo(Convert.FromBase64String("${spki.toString('base64')}"), out int read); return read + "," + k.Oid.Value;`,
      ),
    ).toBe(`${spki.length},1.2.840.113549.1.1.1`);
  });
});
