import { describe, expect, it } from 'vitest';
import { failure, show } from '../../doubles/policy-context.js';

// HashAlgorithmName: names, ordinal equality and OIDs as dotnet/runtime's HashAlgorithmName.cs gives them
// (https://learn.microsoft.com/dotnet/api/system.security.cryptography.hashalgorithmname); the OIDs are those of
// HashAlgorithmName.FromOid's documentation (2.16.840.1.101.3.4.2.1 is SHA256).
describe('HashAlgorithmName', () => {
  it.each([
    ['HashAlgorithmName.SHA256.Name', 'SHA256'],
    ['HashAlgorithmName.SHA1.ToString()', 'SHA1'],
    ['new HashAlgorithmName("SHA384") == HashAlgorithmName.SHA384', 'True'],
    ['HashAlgorithmName.SHA256.Equals(HashAlgorithmName.SHA512)', 'False'],
    ['new HashAlgorithmName("sha256") == HashAlgorithmName.SHA256', 'False'],
    ['default(HashAlgorithmName).Name == null', 'True'],
    ['default(HashAlgorithmName).ToString()', ''],
    ['HashAlgorithmName.FromOid("2.16.840.1.101.3.4.2.1").Name', 'SHA256'],
    ['HashAlgorithmName.TryFromOid("1.2.3", out var h)', 'False'],
  ])('%s is %j', (expression, expected) => {
    expect(show(expression)).toBe(expected);
  });

  it('names an unknown OID as .NET does', () => {
    expect(failure('HashAlgorithmName.FromOid("1.2.3")')).toContain(
      'The specified OID (1.2.3) does not represent a known hash algorithm.',
    );
  });
});
