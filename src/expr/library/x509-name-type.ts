/**
 * X509NameType and what X509Certificate2.GetNameInfo(nameType, forIssuer) reads by it, following dotnet/runtime's
 * CertificateData.GetNameInfo: the alternative name of the kind asked for, else the name's own attribute.
 * https://learn.microsoft.com/dotnet/api/system.security.cryptography.x509certificates.x509nametype
 */
import type { CertificateModel } from '../context.js';
import { makeEnum } from '../runtime/enum.js';
import { defineEnumType } from './enums.js';
import { nameAttributes } from './x509-bytes.js';
import { certificateFields } from './x509-fields.js';

export const X509NameTypeEnum = makeEnum('X509NameType', {
  SimpleName: 0,
  EmailName: 1,
  UpnName: 2,
  DnsName: 3,
  DnsFromAlternativeName: 4,
  UrlName: 5,
});
defineEnumType(X509NameTypeEnum, 'System.Security.Cryptography.X509Certificates');

/**
 * Node's subjectAltName text (`DNS:a.example, email:x@example`), values JSON-quoted when they hold a comma. Read
 * in one pass: the text comes from a certificate an expression may have built.
 */
function altNames(text: string | undefined): Array<[string, string]> {
  const s = text ?? '';
  const out: Array<[string, string]> = [];
  for (let at = 0; at < s.length; ) {
    const colon = s.indexOf(':', at);
    if (colon < 0) break;
    let end: number;
    let value: string;
    if (s[colon + 1] === '"') {
      end = colon + 2;
      while (end < s.length && s[end] !== '"') end += s[end] === '\\' ? 2 : 1;
      end = Math.min(end + 1, s.length);
      try {
        value = JSON.parse(s.slice(colon + 1, end)) as string;
      } catch {
        value = s.slice(colon + 1, end);
      }
    } else {
      const comma = s.indexOf(',', colon);
      end = comma < 0 ? s.length : comma;
      value = s.slice(colon + 1, end);
    }
    out.push([s.slice(at, colon).trim(), value]);
    const next = s.indexOf(',', end);
    if (next < 0) break;
    at = next + 1;
  }
  return out;
}

/**
 * .NET's SimpleName: the most specific CN; else OU, O or e-mail in that order of preference — the least specific
 * of each, as .NET keeps overwriting it while it reads — else the most specific attribute.
 */
function simpleName(attrs: Array<[string, string]>): string | null {
  const cn = attrs.find(([k]) => k === 'CN');
  if (cn) return cn[1];
  const pick = (key: string) => attrs.findLast(([k]) => k === key)?.[1];
  return pick('OU') ?? pick('O') ?? pick('E') ?? attrs[0]?.[1] ?? null;
}

/**
 * GetNameInfo(nameType, forIssuer) as .NET reads a certificate: the alternative name of the kind asked for, else the
 * name's attribute (CN for DnsName, the e-mail attribute for EmailName), else "". Node exposes the subject's
 * alternative names only: for the issuer the name's attributes are read.
 */
export function nameInfo(c: CertificateModel, nameType: number, forIssuer: boolean): string {
  const fields = certificateFields(c);
  const attrs = nameAttributes(forIssuer ? fields.node.issuer : fields.node.subject);
  const types = X509NameTypeEnum.members;
  if (nameType === types.SimpleName) {
    const simple = simpleName(attrs);
    if (simple !== null) return simple;
  }
  const alt = forIssuer ? [] : altNames(fields.node.subjectAltName);
  const altKind: Record<number, (k: string, v: string) => boolean> = {
    [types.SimpleName]: (k) => k === 'email',
    [types.EmailName]: (k) => k === 'email',
    [types.UpnName]: (k, v) => k === 'othername' && /^UPN:/.test(v),
    [types.DnsName]: (k) => k === 'DNS',
    [types.DnsFromAlternativeName]: (k) => k === 'DNS',
    [types.UrlName]: (k) => k === 'URI',
  };
  const match = alt.find(([k, v]) => altKind[nameType]?.(k, v));
  if (match) return nameType === types.UpnName ? match[1].replace(/^UPN::?/, '') : match[1];
  if (nameType === types.EmailName) return attrs.find(([k]) => k === 'E')?.[1] ?? '';
  if (nameType === types.DnsName) return attrs.find(([k]) => k === 'CN')?.[1] ?? '';
  return '';
}
