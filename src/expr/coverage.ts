/**
 * How much of the ".NET Framework types allowed in policy expressions" table the expression library covers,
 * computed rather than kept by hand: the documented table is a copy in reference/apim-expression-types.json; what
 * Portcullis offers is read from the library's type tables (runtime/core.ts). scripts/expression-types.ts renders
 * docs/expression-types.md from both, and test/unit/expr/coverage.test.ts fails when the page, the copy and the
 * library disagree — a documented type or listed member that is neither in the library nor in MISSING below, or a
 * MISSING row the library has since gained.
 */
import './library/index.js';
import {
  findIndexer,
  findMethod,
  findProperty,
  KNOWN_MEMBERS,
  TYPES_BY_NAME,
  type TypeInfo,
} from './runtime/core.js';

/** reference/apim-expression-types.json. */
export interface DocumentedTypes {
  readonly about: string;
  readonly source: string;
  readonly copy: string;
  readonly retrieved: string;
  readonly types: readonly DocumentedType[];
}

export interface DocumentedType {
  /** As the page writes it: `System.Collections.Generic.Dictionary<TKey, TValue>`. */
  readonly type: string;
  /** 'all', or the members the page lists (`(Constructor)` for the constructor). */
  readonly members: 'all' | readonly string[];
  /** Members the page excludes from "All". */
  readonly except?: readonly string[];
}

/**
 * Documented types and listed members the library does not have, each with the reason. A type name alone stands for
 * the whole type; `Type.Member` for one listed member.
 */
export const MISSING: Readonly<Record<string, string>> = {
  'Newtonsoft.Json.Linq.JConstructor':
    "left out: Newtonsoft reads a constructor (`new Date(1)`) only from text that is not JSON (RFC 8259), which the gateway's JSON parser refuses, so only an expression building one would meet it",
  'System.TimeZoneInfo.AdjustmentRule':
    "`TimeZoneInfo.GetAdjustmentRules` is left out: the runtime's time-zone database (ICU, through Intl) gives a zone's offset at an instant, not its rules; every conversion is computed from those offsets",
  'System.TimeZoneInfo.TransitionTime': 'part of an AdjustmentRule, left out with it',
};

/**
 * Where the library models a documented type by another (an interface by the class behind it, a narrow integer by a
 * wider one), what a user should know. Keyed by the documented name.
 */
export const NOTES: Readonly<Record<string, string>> = {
  'System.Net.IPAddress':
    "parsed and printed by .NET's rules (IPv4 shorthand such as `10.1`, octal and hex parts, bracketed IPv6 with a port); an IPv6 scope naming an interface counts as no scope; `AddressFamily` gives a value that prints and casts to int, as its enum type is not in the table",
  'System.Security.Cryptography.AsymmetricAlgorithm':
    'RSA is the one asymmetric algorithm the table allows, so every AsymmetricAlgorithm here is an RSA',
  'System.Security.Cryptography.RSA':
    'not offered: `ExportParameters`/`ImportParameters` (RSAParameters is not an allowed type), the `Try*` forms (they write into a Span), the encrypted PKCS#8 members (PbeParameters is not allowed); a generated key is at most 4096 bits',
  'System.Security.Cryptography.Oid':
    "not offered: `FromFriendlyName`/`FromOidValue` (their OidGroup is not an allowed type); friendly names are .NET's cross-platform (Windows) names",
  'System.Security.Cryptography.X509Certificates.PublicKey':
    'not offered: `EncodedKeyValue`/`EncodedParameters` and their constructor (AsnEncodedData is not an allowed type), the DSA and elliptic-curve getters (nor are those classes)',
  'System.Security.Cryptography.X509Certificates.X509Certificate':
    'not offered: `CreateFromCertFile`/`CreateFromSignedFile` (no file system), `Handle` (a native pointer), `Import` (.NET throws: certificates are immutable); `Export` writes `X509ContentType.Cert`',
  'System.Security.Cryptography.X509Certificates.X509Certificate2':
    "`GetNameInfo` reads the subject's alternative names, not the issuer's (Node does not expose them); a certificate has a private key only from `CopyWithPrivateKey` or `CreateFromPem`; `ToString(true)` is refused (it words the extensions as Windows formats them)",
  'System.Int16': 'an `int` underneath: values are not narrowed to 16 bits',
  'System.UInt16': 'an `int` underneath: values are not narrowed to 16 bits',
  'System.SByte': 'an `int` underneath: values are not narrowed to 8 bits',
  'System.UInt32': 'a `long` underneath: values are not narrowed to 32 bits',
  'System.UInt64': 'a `long` underneath: values above `long.MaxValue` wrap',
  'System.Single': 'a `double` underneath: arithmetic is not rounded to 32 bits',
  'Newtonsoft.Json.Linq.JRaw': '`JRaw.Create` is left out: it reads from a `JsonReader`, not an allowed type',
  'System.Nullable':
    '`GetUnderlyingType` is left out: it takes a `System.Type`, and `typeof` is refused at load',
  'System.TimeZone':
    "the gateway's zone, UTC; `GetDaylightChanges` is left out: it returns `System.Globalization.DaylightTime`, not an allowed type",
  'System.TimeZoneInfo':
    'IANA and Windows ids (Windows ids through CLDR\'s windowsZones); `TimeZoneInfo.Local` is UTC, as the gateway runs; names come from ICU in English (`DisplayName` "(UTC-08:00) Pacific Time"); `GetAdjustmentRules` is left out (see AdjustmentRule)',
  'System.Xml.Linq.XObject':
    'annotations and the `Changed`/`Changing` events are left out: a policy expression cannot subscribe a handler',
  'System.Xml.Linq.XNode':
    '`CreateReader`, `ReadFrom` and `WriteTo` are left out: XmlReader and XmlWriter are not among the allowed types',
  'System.Xml.Linq.XElement': '`Load` and `Save` are left out (no files or streams)',
  'System.Text.RegularExpressions.Group':
    '`Captures` holds the last capture of a repeated group only (RE2 keeps no others; see differences)',
};

export type Coverage =
  | {
      readonly status: 'available';
      readonly as: string;
      readonly members: readonly string[];
      readonly missing: readonly MissingMember[];
    }
  | { readonly status: 'missing'; readonly reason: string }
  | { readonly status: 'unknown' };

export interface MissingMember {
  readonly member: string;
  /** Undefined when MISSING has no row for it: the test fails. */
  readonly reason: string | undefined;
}

/** `Dictionary<TKey, TValue>` → `Dictionary\`2`, the name the library registers a generic type under. */
export function libraryName(documented: string): string {
  const m = /^([^<]*)(?:<(.*)>)?$/.exec(documented)!;
  return m[2] ? `${m[1]}\`${m[2].split(',').length}` : m[1]!;
}

export function libraryType(documented: string): TypeInfo | undefined {
  const name = libraryName(documented);
  return TYPES_BY_NAME.get(name) ?? TYPES_BY_NAME.get(name.slice(name.lastIndexOf('.') + 1));
}

function hasMember(info: TypeInfo, member: string): boolean {
  if (member === '(Constructor)') return info.construct !== undefined;
  if (member === 'Item') return findIndexer(info) !== undefined;
  return (
    findMethod(info, member) !== undefined ||
    findProperty(info, member) !== undefined ||
    info.staticMethods.has(member) ||
    info.staticProps.has(member)
  );
}

/** The members a type table offers (its own, its bases', static and instance), sorted. */
export function offeredMembers(info: TypeInfo): string[] {
  const names = new Set<string>();
  for (let c: TypeInfo | undefined = info; c; c = c.base) {
    for (const table of [c.props, c.methods, c.staticProps, c.staticMethods])
      for (const k of table.keys()) names.add(k);
    if (c.indexer) names.add('Item');
  }
  if (info.construct) names.add('(Constructor)');
  return [...names].filter((n) => n === '(Constructor)' || n === 'Item' || KNOWN_MEMBERS.has(n)).sort();
}

export function typeCoverage(doc: DocumentedType): Coverage {
  const info = libraryType(doc.type);
  if (!info) {
    const reason = MISSING[doc.type];
    return reason === undefined ? { status: 'unknown' } : { status: 'missing', reason };
  }
  const listed = doc.members === 'all' ? [] : doc.members;
  const missing = listed
    .filter((member) => !hasMember(info, member))
    .map((member) => ({ member, reason: MISSING[`${doc.type}.${member}`] }));
  return { status: 'available', as: info.fullName, members: offeredMembers(info), missing };
}

/** MISSING rows the library now covers, or that name no documented type: stale, so the test fails on them. */
export function staleMissingRows(types: readonly DocumentedType[]): string[] {
  const live = new Set<string>();
  for (const doc of types) {
    const c = typeCoverage(doc);
    if (c.status === 'missing') live.add(doc.type);
    if (c.status === 'available') for (const m of c.missing) live.add(`${doc.type}.${m.member}`);
  }
  return Object.keys(MISSING).filter((key) => !live.has(key));
}

const code = (s: string): string => `\`${s.replace(/\|/g, '\\|')}\``;

function row(doc: DocumentedType): string {
  const c = typeCoverage(doc);
  const documented =
    doc.members === 'all'
      ? `All${doc.except ? `, except ${doc.except.map(code).join(', ')}` : ''}`
      : doc.members.map((m) => (m.startsWith('(') ? m : code(m))).join(', ');
  if (c.status === 'unknown') return `| ${code(doc.type)} | ${documented} | **unknown** | |`;
  if (c.status === 'missing') return `| ${code(doc.type)} | ${documented} | not available | ${c.reason} |`;
  const notes: string[] = [];
  if (c.as !== libraryName(doc.type)) notes.push(`as ${code(c.as)}`);
  if (NOTES[doc.type]) notes.push(NOTES[doc.type]!);
  for (const m of c.missing) notes.push(`${code(m.member)} not available: ${m.reason ?? '**no reason**'}`);
  const offered =
    doc.members === 'all' ? c.members.map((m) => (m.startsWith('(') ? m : code(m))).join(', ') : '';
  if (offered) notes.push(`members: ${offered}`);
  return `| ${code(doc.type)} | ${documented} | available | ${notes.join('; ')} |`;
}

export function expressionTypesPage(doc: DocumentedTypes): string {
  const rows = doc.types.map(row);
  const available = doc.types.filter((t) => typeCoverage(t).status === 'available').length;
  return `${[
    '# Expression types',
    '',
    'What Portcullis offers of every type and member in API Management\'s table of ".NET Framework types allowed in',
    'policy expressions". Generated by `node scripts/with-supported-node.js node --import tsx',
    'scripts/expression-types.ts --write` from the expression library (`src/expr/library`) and a copy of the table',
    `retrieved ${doc.retrieved} (\`reference/apim-expression-types.json\`); a unit test fails when the library and`,
    'this page disagree. A member the library does not list is refused when the policy loads, with its',
    '`file:line:col`; behaviour that differs from .NET on purpose is in [differences](differences.md).',
    '',
    `Source: [${doc.source}](${doc.source}) — ${doc.copy}.`,
    '',
    `${available} of ${doc.types.length} documented types are available.`,
    '',
    '| type | documented members | Portcullis | notes |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n')}\n`;
}
