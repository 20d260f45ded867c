import { describe, expect, it } from 'vitest';
import { failure, show, showBlock } from '../../doubles/policy-context.js';

// Oid: friendly names from dotnet/runtime's OidLookup table (the Windows names .NET uses on every platform:
// sha256, sha256RSA, CN); since .NET 5 Value and FriendlyName can be set once
// (https://learn.microsoft.com/dotnet/api/system.security.cryptography.oid.value).
describe('Oid', () => {
  it.each([
    ['new Oid("sha256").Value', '2.16.840.1.101.3.4.2.1'],
    ['new Oid("SHA256").FriendlyName', 'sha256'],
    ['new Oid("1.2.840.113549.1.1.11").FriendlyName', 'sha256RSA'],
    ['new Oid("2.5.4.3").FriendlyName', 'CN'],
    ['new Oid("1.2.3.4").FriendlyName == null', 'True'],
    ['new Oid("1.2.3.4", "mine").FriendlyName', 'mine'],
    ['new Oid(new Oid("RSA")).Value', '1.2.840.113549.1.1.1'],
  ])('%s is %s', (expression, expected) => {
    expect(show(expression)).toBe(expected);
  });

  it('sets a value once (.NET 5 and later)', () => {
    expect(showBlock('var o = new Oid(); o.Value = "1.2.3"; return o.Value;')).toBe('1.2.3');
    expect(failure('var o = new Oid("1.2.3"); o.Value = "1.2.4"; return o.Value;', 'block')).toContain(
      'PlatformNotSupportedException',
    );
  });
});
