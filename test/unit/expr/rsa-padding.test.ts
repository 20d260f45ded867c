import { describe, expect, it } from 'vitest';
import { failure, show } from '../../doubles/policy-context.js';

// RSASignaturePadding and RSAEncryptionPadding: ToString is the mode (RSASignaturePadding.cs), or the mode then the
// OAEP hash's name (RSAEncryptionPadding.cs, "OaepSHA256"); `==` compares mode and hash (dotnet/runtime).
describe('RSASignaturePadding and RSAEncryptionPadding', () => {
  it.each([
    ['RSASignaturePadding.Pkcs1.ToString()', 'Pkcs1'],
    ['RSASignaturePadding.Pss.Mode.ToString()', 'Pss'],
    ['RSASignaturePadding.Pss == RSASignaturePadding.Pss', 'True'],
    ['RSASignaturePadding.Pss == RSASignaturePadding.Pkcs1', 'False'],
    ['RSAEncryptionPadding.OaepSHA256.ToString()', 'OaepSHA256'],
    ['RSAEncryptionPadding.Pkcs1.ToString()', 'Pkcs1'],
    ['RSAEncryptionPadding.OaepSHA1.OaepHashAlgorithm.Name', 'SHA1'],
    ['RSAEncryptionPadding.CreateOaep(HashAlgorithmName.SHA384) == RSAEncryptionPadding.OaepSHA384', 'True'],
    ['RSAEncryptionPadding.OaepSHA256 == RSAEncryptionPadding.OaepSHA512', 'False'],
    ['RSAEncryptionPadding.Pkcs1.Mode.ToString()', 'Pkcs1'],
  ])('%s is %s', (expression, expected) => {
    expect(show(expression)).toBe(expected);
  });

  it('refuses an OAEP padding without a hash name', () => {
    expect(failure('RSAEncryptionPadding.CreateOaep(new HashAlgorithmName(""))')).toContain(
      'The hash algorithm name cannot be null or empty.',
    );
  });
});
