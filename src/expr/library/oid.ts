/**
 * System.Security.Cryptography.Oid: an object identifier and its friendly name — what X509Certificate2's
 * SignatureAlgorithm and PublicKey.Oid return. `new Oid("sha256")` and `new Oid("2.16.840.1.101.3.4.2.1")` both
 * give Value 2.16.840.1.101.3.4.2.1 and FriendlyName sha256.
 * https://learn.microsoft.com/dotnet/api/system.security.cryptography.oid
 *
 * Not offered: FromFriendlyName and FromOidValue, whose second argument is an OidGroup, a type the table does not
 * allow (the constructor does the same lookup across all groups).
 */
import { CsException, defineType } from '../runtime/core.js';
import { str } from './helpers.js';

/**
 * Friendly names as .NET gives them on every platform: the Windows names that dotnet/runtime's OidLookup keeps in a
 * table of its own so that Windows and Linux agree (a selection: names, hashes, signature and key algorithms, the
 * certificate extensions and usages a policy meets).
 */
const FRIENDLY_NAMES: ReadonlyArray<readonly [string, string]> = [
  ['C', '2.5.4.6'],
  ['CN', '2.5.4.3'],
  ['DC', '0.9.2342.19200300.100.1.25'],
  ['E', '1.2.840.113549.1.9.1'],
  ['G', '2.5.4.42'],
  ['L', '2.5.4.7'],
  ['O', '2.5.4.10'],
  ['OU', '2.5.4.11'],
  ['S', '2.5.4.8'],
  ['SN', '2.5.4.4'],
  ['SERIALNUMBER', '2.5.4.5'],
  ['STREET', '2.5.4.9'],
  ['T', '2.5.4.12'],
  ['PostalCode', '2.5.4.17'],
  ['md5', '1.2.840.113549.2.5'],
  ['sha1', '1.3.14.3.2.26'],
  ['sha256', '2.16.840.1.101.3.4.2.1'],
  ['sha384', '2.16.840.1.101.3.4.2.2'],
  ['sha512', '2.16.840.1.101.3.4.2.3'],
  ['RSA', '1.2.840.113549.1.1.1'],
  ['RSAES_OAEP', '1.2.840.113549.1.1.7'],
  ['RSASSA-PSS', '1.2.840.113549.1.1.10'],
  ['md5RSA', '1.2.840.113549.1.1.4'],
  ['sha1RSA', '1.2.840.113549.1.1.5'],
  ['sha256RSA', '1.2.840.113549.1.1.11'],
  ['sha384RSA', '1.2.840.113549.1.1.12'],
  ['sha512RSA', '1.2.840.113549.1.1.13'],
  ['DSA', '1.2.840.10040.4.1'],
  ['ECC', '1.2.840.10045.2.1'],
  ['sha1ECDSA', '1.2.840.10045.4.1'],
  ['sha256ECDSA', '1.2.840.10045.4.3.2'],
  ['sha384ECDSA', '1.2.840.10045.4.3.3'],
  ['sha512ECDSA', '1.2.840.10045.4.3.4'],
  ['ECDSA_P256', '1.2.840.10045.3.1.7'],
  ['ECDSA_P384', '1.3.132.0.34'],
  ['ECDSA_P521', '1.3.132.0.35'],
  ['aes128', '2.16.840.1.101.3.4.1.2'],
  ['aes192', '2.16.840.1.101.3.4.1.22'],
  ['aes256', '2.16.840.1.101.3.4.1.42'],
  ['Subject Key Identifier', '2.5.29.14'],
  ['Key Usage', '2.5.29.15'],
  ['Subject Alternative Name', '2.5.29.17'],
  ['Basic Constraints', '2.5.29.19'],
  ['Authority Key Identifier', '2.5.29.35'],
  ['Enhanced Key Usage', '2.5.29.37'],
  ['Server Authentication', '1.3.6.1.5.5.7.3.1'],
  ['Client Authentication', '1.3.6.1.5.5.7.3.2'],
];

const BY_NAME = new Map(FRIENDLY_NAMES.map(([name, oid]) => [name.toLowerCase(), oid]));
const BY_VALUE = new Map(FRIENDLY_NAMES.map(([name, oid]) => [oid, name]));

export class CsOid {
  constructor(
    public value: string | null,
    public friendlyName: string | null,
  ) {}

  /** `new Oid(text)`: a friendly name .NET knows is looked up; anything else is taken as the value. */
  static of(text: string): CsOid {
    const value = BY_NAME.get(text.toLowerCase()) ?? text;
    return new CsOid(value, BY_VALUE.get(value) ?? null);
  }
}

/** Since .NET 5 an Oid's Value and FriendlyName can be set once, from null; changing either throws. */
const setOnce = (current: string | null, next: string | null, what: string): void => {
  if (current !== null && current !== next) {
    throw new CsException(
      'PlatformNotSupportedException',
      `The OID ${what} cannot be changed from its current value.`,
    );
  }
};

defineType({
  name: 'Oid',
  namespace: 'System.Security.Cryptography',
  classes: [CsOid],
  construct: (_rt, args) => {
    if (args.length === 0) return new CsOid(null, null);
    if (args[0] instanceof CsOid) return new CsOid(args[0].value, args[0].friendlyName);
    if (args.length === 2) {
      return new CsOid(
        args[0] === null ? null : str(args[0], 'value'),
        args[1] === null ? null : str(args[1], 'friendlyName'),
      );
    }
    return CsOid.of(str(args[0], 'oid'));
  },
  props: {
    Value: {
      get: (_rt, o: CsOid) => o.value,
      set: (_rt, o: CsOid, v) => {
        const next = v === null ? null : str(v);
        setOnce(o.value, next, 'value');
        o.value = next;
      },
    },
    FriendlyName: {
      get: (_rt, o: CsOid) => o.friendlyName ?? (o.value === null ? null : (BY_VALUE.get(o.value) ?? null)),
      set: (_rt, o: CsOid, v) => {
        const next = v === null ? null : str(v);
        setOnce(o.friendlyName, next, 'friendly name');
        o.friendlyName = next;
        // Setting a friendly name .NET knows also sets the value, when it has none yet.
        const value = next === null ? undefined : BY_NAME.get(next.toLowerCase());
        if (value !== undefined && o.value === null) o.value = value;
      },
    },
  },
});

export const oidOf = (value: string): CsOid => new CsOid(value, BY_VALUE.get(value) ?? null);
export const knownOidName = (value: string): string | undefined => BY_VALUE.get(value);
