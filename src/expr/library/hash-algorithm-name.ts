/**
 * System.Security.Cryptography.HashAlgorithmName: the struct that names the hash of an RSA signature or of OAEP
 * padding (`HashAlgorithmName.SHA256`). Equality is by name, ordinal, as .NET's `==` and Equals are.
 * https://learn.microsoft.com/dotnet/api/system.security.cryptography.hashalgorithmname
 */
import { CsException, defineType, prop } from '../runtime/core.js';
import { hashString, setOut, str } from './helpers.js';

export class CsHashAlgorithmName {
  constructor(readonly name: string | null) {}
}

/** The names .NET knows, their OIDs, and Node's digest names. */
const KNOWN: Readonly<Record<string, { readonly oid: string; readonly node: string }>> = {
  MD5: { oid: '1.2.840.113549.2.5', node: 'md5' },
  SHA1: { oid: '1.3.14.3.2.26', node: 'sha1' },
  SHA256: { oid: '2.16.840.1.101.3.4.2.1', node: 'sha256' },
  SHA384: { oid: '2.16.840.1.101.3.4.2.2', node: 'sha384' },
  SHA512: { oid: '2.16.840.1.101.3.4.2.3', node: 'sha512' },
};

/**
 * Node's digest for a HashAlgorithmName argument, with .NET's errors: a missing or empty name is an
 * ArgumentException, a name .NET does not know a CryptographicException.
 */
export function nodeHash(v: unknown, what = 'hashAlgorithm'): string {
  const name = v instanceof CsHashAlgorithmName ? v.name : null;
  if (!name) {
    throw new CsException(
      'ArgumentException',
      `The hash algorithm name cannot be null or empty. (Parameter '${what}')`,
    );
  }
  const known = KNOWN[name];
  if (!known) throw new CsException('CryptographicException', `'${name}' is not a known hash algorithm.`);
  return known.node;
}

function fromOid(oid: string): CsHashAlgorithmName | null {
  const name = Object.keys(KNOWN).find((k) => KNOWN[k]!.oid === oid);
  return name ? new CsHashAlgorithmName(name) : null;
}

const statics = Object.fromEntries(
  Object.keys(KNOWN).map((name) => [name, prop(() => new CsHashAlgorithmName(name))]),
);

export const HashAlgorithmNameType = defineType({
  name: 'HashAlgorithmName',
  namespace: 'System.Security.Cryptography',
  classes: [CsHashAlgorithmName],
  construct: (_rt, args) => new CsHashAlgorithmName(args[0] === null ? null : str(args[0], 'name')),
  defaultValue: new CsHashAlgorithmName(null),
  valueEquals: (a: CsHashAlgorithmName, b) => b instanceof CsHashAlgorithmName && a.name === b.name,
  props: { Name: prop((h: CsHashAlgorithmName) => h.name) },
  methods: {
    ToString: (_rt, h: CsHashAlgorithmName) => h.name ?? '',
    GetHashCode: (_rt, h: CsHashAlgorithmName) => (h.name === null ? 0 : hashString(h.name)),
  },
  staticProps: statics,
  staticMethods: {
    FromOid: (_rt, _s, args) => {
      const oid = str(args[0], 'oidValue');
      const found = fromOid(oid);
      if (!found) {
        throw new CsException(
          'CryptographicException',
          `The specified OID (${oid}) does not represent a known hash algorithm.`,
        );
      }
      return found;
    },
    TryFromOid: (_rt, _s, args) => {
      const found = fromOid(str(args[0], 'oidValue'));
      setOut(args[1], found ?? new CsHashAlgorithmName(null));
      return found !== null;
    },
  },
});
