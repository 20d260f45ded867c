import { constants, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { failure, show, showBlock } from '../../doubles/policy-context.js';

// RSA and AsymmetricAlgorithm. Signatures and ciphertexts are checked by node:crypto on the other side (RFC 8017,
// the PKCS#1 that .NET's RSA implements); names and errors are .NET's (dotnet/runtime RSA.cs: SignatureAlgorithm and
// KeyExchangeAlgorithm are "RSA"; the ImportFromPem, ToXmlString and Import*(…, out bytesRead) reference pages at
// learn.microsoft.com/dotnet/api/system.security.cryptography.rsa).
describe('RSA', () => {
  let privatePem: string;
  let publicPem: string;
  let publicKey: KeyObject;
  let privateKey: KeyObject;

  beforeAll(() => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    privateKey = pair.privateKey;
    publicKey = pair.publicKey;
    privatePem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    publicPem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  });

  const withKey = (pem: string, body: string): string =>
    showBlock(`var rsa = RSA.Create(); rsa.ImportFromPem(${JSON.stringify(pem)}); ${body}`);

  it('signs data that node:crypto verifies (PKCS#1 v1.5 and PSS with a salt as long as the hash)', () => {
    const pkcs1 = withKey(
      privatePem,
      'return Convert.ToBase64String(rsa.SignData(Encoding.UTF8.GetBytes("hello"), HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1));',
    );
    expect(verify('sha256', Buffer.from('hello'), publicKey, Buffer.from(pkcs1, 'base64'))).toBe(true);
    const pss = withKey(
      privatePem,
      'return Convert.ToBase64String(rsa.SignData(Encoding.UTF8.GetBytes("hello"), HashAlgorithmName.SHA384, RSASignaturePadding.Pss));',
    );
    expect(
      verify(
        'sha384',
        Buffer.from('hello'),
        { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 48 },
        Buffer.from(pss, 'base64'),
      ),
    ).toBe(true);
  });

  it('verifies what node:crypto signed, and is false (not an exception) for anything else', () => {
    const signature = sign('sha256', Buffer.from('payload'), privateKey).toString('base64');
    const check = (data: string, padding: string) =>
      withKey(
        publicPem,
        `return rsa.VerifyData(Encoding.UTF8.GetBytes("${data}"), Convert.FromBase64String("${signature}"), HashAlgorithmName.SHA256, RSASignaturePadding.${padding});`,
      );
    expect(check('payload', 'Pkcs1')).toBe('True');
    expect(check('payloaD', 'Pkcs1')).toBe('False');
    expect(check('payload', 'Pss')).toBe('False');
  });

  it('SignHash and VerifyHash over a SHA-256 computed by the expression', () => {
    const body =
      'var hash = SHA256.Create().ComputeHash(Encoding.UTF8.GetBytes("x")); var s = rsa.SignHash(hash, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1); return rsa.VerifyHash(hash, s, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1) + "," + Convert.ToBase64String(s);';
    const [ok, signature] = withKey(privatePem, body).split(',');
    expect(ok).toBe('True');
    expect(verify('sha256', Buffer.from('x'), publicKey, Buffer.from(signature!, 'base64'))).toBe(true);
  });

  it('SignHash with Pss: node:crypto verifies it over the data (RFC 8017 EMSA-PSS, salt as long as the hash)', () => {
    const body =
      'var hash = SHA256.Create().ComputeHash(Encoding.UTF8.GetBytes("pss")); return Convert.ToBase64String(rsa.SignHash(hash, HashAlgorithmName.SHA256, RSASignaturePadding.Pss));';
    const signature = Buffer.from(withKey(privatePem, body), 'base64');
    const options = { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 };
    expect(verify('sha256', Buffer.from('pss'), options, signature)).toBe(true);
    expect(verify('sha256', Buffer.from('psS'), options, signature)).toBe(false);
  });

  it('VerifyHash with Pss accepts what node:crypto signed, and nothing else', () => {
    for (const [hash, bytes] of [
      ['SHA256', 32],
      ['SHA512', 64],
    ] as const) {
      const signature = sign(hash.toLowerCase(), Buffer.from('data'), {
        key: privateKey,
        padding: constants.RSA_PKCS1_PSS_PADDING,
        saltLength: bytes,
      }).toString('base64');
      const check = (data: string) =>
        withKey(
          publicPem,
          `var h = ${hash}.Create().ComputeHash(Encoding.UTF8.GetBytes("${data}")); return rsa.VerifyHash(h, Convert.FromBase64String("${signature}"), HashAlgorithmName.${hash}, RSASignaturePadding.Pss);`,
        );
      expect(check('data')).toBe('True');
      expect(check('datA')).toBe('False');
    }
  });

  it("refuses a hash whose length is not the algorithm's", () => {
    expect(
      failure(
        `var rsa = RSA.Create(); rsa.ImportFromPem(${JSON.stringify(privatePem)}); return rsa.SignHash(new byte[] { 1, 2, 3 }, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);`,
        'block',
      ),
    ).toContain('CryptographicException');
  });

  it('encrypts with the public key and decrypts with the private one (OAEP SHA-256 and PKCS#1)', () => {
    for (const padding of ['OaepSHA256', 'OaepSHA1', 'Pkcs1']) {
      const cipher = withKey(
        publicPem,
        `return Convert.ToBase64String(rsa.Encrypt(Encoding.UTF8.GetBytes("secret"), RSAEncryptionPadding.${padding}));`,
      );
      expect(
        withKey(
          privatePem,
          `return Encoding.UTF8.GetString(rsa.Decrypt(Convert.FromBase64String("${cipher}"), RSAEncryptionPadding.${padding}));`,
        ),
      ).toBe('secret');
    }
  });

  it('exports the key as node:crypto does, with .NET PEM (no newline after the END line)', () => {
    expect(withKey(publicPem, 'return rsa.ExportSubjectPublicKeyInfoPem();')).toBe(publicPem.trimEnd());
    const spki = withKey(publicPem, 'return Convert.ToBase64String(rsa.ExportSubjectPublicKeyInfo());');
    expect(spki).toBe(publicKey.export({ format: 'der', type: 'spki' }).toString('base64'));
    const pkcs1 = withKey(publicPem, 'return Convert.ToBase64String(rsa.ExportRSAPublicKey());');
    expect(
      createPublicKey({ key: Buffer.from(pkcs1, 'base64'), format: 'der', type: 'pkcs1' }).equals(publicKey),
    ).toBe(true);
  });

  it('imports DER with the bytes read as its out argument', () => {
    const der = publicKey.export({ format: 'der', type: 'spki' });
    const padded = Buffer.concat([der, Buffer.from([0, 0, 0])]).toString('base64');
    expect(
      showBlock(
        `var rsa = RSA.Create(); rsa.ImportSubjectPublicKeyInfo(Convert.FromBase64String("${padded}"), out int read); return read + "," + rsa.KeySize;`,
      ),
    ).toBe(`${der.length},2048`);
  });

  it('writes and reads .NET XML keys (Modulus and Exponent; private parts padded to the modulus)', () => {
    const xml = withKey(publicPem, 'return rsa.ToXmlString(false);');
    const jwk = publicKey.export({ format: 'jwk' });
    expect(xml).toBe(
      `<RSAKeyValue><Modulus>${Buffer.from(jwk.n!, 'base64url').toString('base64')}</Modulus><Exponent>AQAB</Exponent></RSAKeyValue>`,
    );
    const full = withKey(privatePem, 'return rsa.ToXmlString(true);');
    expect(full).toMatch(
      /<P>.*<\/P><Q>.*<\/Q><DP>.*<\/DP><DQ>.*<\/DQ><InverseQ>.*<\/InverseQ><D>.*<\/D><\/RSAKeyValue>$/,
    );
    const d = /<D>(.*)<\/D>/.exec(full)![1]!;
    expect(Buffer.from(d, 'base64')).toHaveLength(256);
    expect(
      showBlock(
        `var rsa = RSA.Create(); rsa.FromXmlString(${JSON.stringify(full)}); return rsa.ExportSubjectPublicKeyInfoPem();`,
      ),
    ).toBe(publicPem.trimEnd());
  });

  it('generates a key only when one is used, of the size asked, within the limit', () => {
    expect(show('RSA.Create().KeySize')).toBe('2048');
    expect(show('RSA.Create(1024).ExportRSAPublicKey().Length > 100')).toBe('True');
    expect(show('RSA.Create().SignatureAlgorithm + "," + RSA.Create().KeyExchangeAlgorithm')).toBe('RSA,RSA');
    expect(failure('RSA.Create(8192).ExportRSAPublicKey()')).toContain('exceeds the limit of 4096 bits');
    // Legal sizes are RSAOpenSsl's: 512 to 16384 bits in steps of 8.
    expect(failure('RSA.Create(1001)')).toContain('Specified key is not a valid size for this algorithm.');
  });

  it('a key too large to generate is a limit, which catch (Exception) does not swallow', () => {
    expect(
      failure(
        'try { return RSA.Create(8192).ExportRSAPublicKey().Length; } catch (Exception) { return -1; }',
        'block',
      ),
    ).toContain('exceeds the limit of 4096 bits');
  });

  it('is an AsymmetricAlgorithm', () => {
    expect(show('RSA.Create() is AsymmetricAlgorithm')).toBe('True');
    expect(showBlock('AsymmetricAlgorithm a = RSA.Create(); return a.KeySize;')).toBe('2048');
  });

  it.each([
    [
      'var rsa = RSA.Create(); rsa.ImportFromPem("no key here"); return 1;',
      'No supported key formats were found.',
    ],
    [
      'var rsa = RSA.Create(); rsa.ImportFromPem("-----BEGIN ENCRYPTED PRIVATE KEY-----\\nAAAA\\n-----END ENCRYPTED PRIVATE KEY-----"); return 1;',
      'An encrypted key was found',
    ],
    [
      'var rsa = RSA.Create(); rsa.ImportSubjectPublicKeyInfo(new byte[] { 1, 2, 3 }, out int n); return n;',
      'CryptographicException',
    ],
  ])('%s fails with %s', (block, expected) => {
    expect(failure(block, 'block')).toContain(expected);
  });

  // ImportFromPem (learn.microsoft.com/dotnet/api/system.security.cryptography.rsa.importfrompem): unsupported PEM
  // objects are ignored; more than one key is an ArgumentException.
  it('ImportFromPem skips other blocks and refuses two keys', () => {
    const other = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    expect(withKey(other + publicPem, 'return rsa.KeySize;')).toBe('2048');
    expect(
      failure(
        `var rsa = RSA.Create(); rsa.ImportFromPem(${JSON.stringify(publicPem + privatePem)}); return 1;`,
        'block',
      ),
    ).toContain('The input contains multiple keys');
  });

  it('reads PEM text full of BEGIN lines without an END in one pass', () => {
    expect(
      failure(
        'var rsa = RSA.Create(); rsa.ImportFromPem(string.Concat(Enumerable.Repeat("-----BEGIN PUBLIC KEY-----", 20000))); return 1;',
        'block',
      ),
    ).toContain('No supported key formats were found.');
  });

  it('has no private key after importing a public one', () => {
    expect(
      failure(
        `var rsa = RSA.Create(); rsa.ImportFromPem(${JSON.stringify(publicPem)}); return rsa.SignData(new byte[] { 1 }, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);`,
        'block',
      ),
    ).toContain('CryptographicException');
  });
});
