/** Convert, Encoding, BitConverter, StringBuilder, Uri, WebUtility. */

import { decodeUrlPath } from '../context.js';
import { asNumber, toDotNetStringRt, toInt32, toInt64 } from '../runtime/convert.js';
import {
  argError,
  CsException,
  checkString,
  checkStringLength,
  defineType,
  formatError,
  invalidCast,
  prop,
  type Rt,
  typeName,
} from '../runtime/core.js';
import { CsEnum } from '../runtime/enum.js';
import { parseDateTime } from '../runtime/format-date.js';
import { CsChar, CsDateTime, CsDecimal, CsDouble } from '../runtime/values.js';
import { UriKindEnum, UriPartialEnum } from './enums.js';
import { compositeFormat, int, paramsArray, str } from './helpers.js';
import { tokenTo } from './json/conversions.js';
import { JToken } from './json/tokens.js';
import { parseDouble, parseInt32, parseInt64, roundHalfEven } from './primitives.js';

export function bytes(v: unknown, what = 'bytes'): Buffer {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v)) return Buffer.from(v.map((x) => Number(x) & 255));
  if (v === null || v === undefined)
    throw new CsException('ArgumentNullException', `Value cannot be null. (Parameter '${what}')`);
  throw invalidCast(typeName(v), 'System.Byte[]');
}

const B64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

function fromBase64(s: string): Buffer {
  const t = s.replace(/[\s]/g, '');
  if (t.length % 4 !== 0 || !B64_RE.test(t)) {
    throw formatError(
      'The input is not a valid Base-64 string as it contains a non-base 64 character, more than two padding characters, or an illegal character among the padding characters.',
    );
  }
  return Buffer.from(t, 'base64');
}

/** Convert.ToInt32(x): strings parse, doubles round half to even, bools become 0/1. */
function convertToInt(v: unknown, long: boolean): unknown {
  if (v === null || v === undefined) return long ? 0n : 0;
  if (typeof v === 'string') return long ? parseInt64(v) : parseInt32(v);
  if (typeof v === 'boolean') return long ? BigInt(v ? 1 : 0) : v ? 1 : 0;
  if (v instanceof CsDouble || v instanceof CsDecimal) {
    const r = roundHalfEven(v.v, 0);
    if (!long && (r > 2147483647 || r < -2147483648))
      throw new CsException('OverflowException', 'Value was either too large or too small for an Int32.');
    return long ? BigInt(r) : r;
  }
  if (v instanceof JToken) return tokenTo(v, long ? 'long' : 'int');
  if (typeof v === 'bigint' && !long && (v > 2147483647n || v < -2147483648n)) {
    throw new CsException('OverflowException', 'Value was either too large or too small for an Int32.');
  }
  return long ? toInt64(v) : toInt32(v);
}

export const ConvertType = defineType({
  name: 'Convert',
  namespace: 'System',
  staticMethods: {
    ToBase64String: (rt, _s, args) => {
      let b = bytes(args[0]);
      if (args.length >= 3) b = b.subarray(int(args[1]), int(args[1]) + int(args[2]));
      checkStringLength(rt, Math.ceil(b.length / 3) * 4);
      return b.toString('base64');
    },
    FromBase64String: (_rt, _s, args) => fromBase64(str(args[0], 's')),
    ToString: (rt, _s, args) => {
      if (
        args.length === 2 &&
        typeof args[1] === 'number' &&
        (typeof args[0] === 'number' || typeof args[0] === 'bigint')
      ) {
        const base = args[1];
        let n = BigInt(args[0]);
        if (n < 0n) n = BigInt.asUintN(typeof args[0] === 'number' ? 32 : 64, n);
        return n.toString(base);
      }
      return args[0] === null ? '' : toDotNetStringRt(rt, args[0]);
    },
    ToInt32: (_rt, _s, args) => {
      if (args.length === 2 && typeof args[0] === 'string' && typeof args[1] === 'number') {
        return Number(BigInt.asIntN(32, BigInt(Number.parseInt(args[0], args[1]))));
      }
      return convertToInt(args[0], false);
    },
    ToInt16: (_rt, _s, args) => convertToInt(args[0], false),
    ToInt64: (_rt, _s, args) => convertToInt(args[0], true),
    ToDouble: (_rt, _s, args) => {
      const v = args[0];
      if (v === null) return new CsDouble(0);
      if (typeof v === 'string') return new CsDouble(parseDouble(v));
      if (typeof v === 'boolean') return new CsDouble(v ? 1 : 0);
      if (v instanceof JToken) return tokenTo(v, 'double');
      return new CsDouble(asNumber(v));
    },
    ToDecimal: (_rt, _s, args) => {
      const v = args[0];
      if (v === null) return new CsDecimal(0);
      if (typeof v === 'string') return new CsDecimal(parseDouble(v));
      if (v instanceof JToken) return tokenTo(v, 'decimal');
      return new CsDecimal(asNumber(v));
    },
    ToBoolean: (_rt, _s, args) => {
      const v = args[0];
      if (v === null) return false;
      if (typeof v === 'boolean') return v;
      if (typeof v === 'string') {
        const t = v.trim().toLowerCase();
        if (t === 'true') return true;
        if (t === 'false') return false;
        throw formatError(`String '${v}' was not recognized as a valid Boolean.`);
      }
      if (v instanceof JToken) return tokenTo(v, 'bool');
      return asNumber(v) !== 0;
    },
    ToChar: (_rt, _s, args) => (args[0] instanceof CsChar ? args[0] : new CsChar(int(args[0]))),
    ToByte: (_rt, _s, args) => (convertToInt(args[0], false) as number) & 255,
    ToDateTime: (_rt, _s, args) => (args[0] instanceof CsDateTime ? args[0] : parseDateTime(str(args[0]))),
    ToHexString: (_rt, _s, args) => bytes(args[0]).toString('hex').toUpperCase(),
    FromHexString: (_rt, _s, args) => {
      const s = str(args[0]);
      if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s))
        throw formatError('The input is not a valid hex string.');
      return Buffer.from(s, 'hex');
    },
  },
});

class CsEncoding {
  constructor(
    readonly name: 'utf8' | 'ascii' | 'latin1' | 'utf16le' | 'utf16be',
    readonly webName: string,
  ) {}
  encode(s: string): Buffer {
    if (this.name === 'ascii')
      return Buffer.from([...s].map((c) => (c.charCodeAt(0) < 128 ? c.charCodeAt(0) : 63)));
    if (this.name === 'utf16be') return Buffer.from(s, 'utf16le').swap16();
    return Buffer.from(s, this.name);
  }
  decode(b: Buffer): string {
    if (this.name === 'ascii') return [...b].map((x) => (x < 128 ? String.fromCharCode(x) : '?')).join('');
    if (this.name === 'utf16be') return Buffer.from(b).swap16().toString('utf16le');
    return b.toString(this.name);
  }
}

const ENCODINGS = {
  UTF8: new CsEncoding('utf8', 'utf-8'),
  ASCII: new CsEncoding('ascii', 'us-ascii'),
  Unicode: new CsEncoding('utf16le', 'utf-16'),
  BigEndianUnicode: new CsEncoding('utf16be', 'utf-16BE'),
  Latin1: new CsEncoding('latin1', 'iso-8859-1'),
};

export const EncodingType = defineType({
  name: 'Encoding',
  namespace: 'System.Text',
  classes: [CsEncoding],
  props: {
    WebName: prop((e: CsEncoding) => e.webName),
    EncodingName: prop((e: CsEncoding) => e.webName),
  },
  methods: {
    GetBytes: (rt, e: CsEncoding, args) => {
      const v = args[0];
      const s = Array.isArray(v)
        ? v.map((c) => String.fromCharCode((c as CsChar).code)).join('')
        : str(v, 's');
      return e.encode(checkString(rt, s));
    },
    GetString: (rt, e: CsEncoding, args) => {
      let b = bytes(args[0]);
      if (args.length >= 3) b = b.subarray(int(args[1]), int(args[1]) + int(args[2]));
      return checkString(rt, e.decode(b));
    },
    GetByteCount: (_rt, e: CsEncoding, args) => e.encode(str(args[0])).length,
  },
  staticProps: Object.fromEntries(Object.entries(ENCODINGS).map(([k, v]) => [k, prop(() => v)])),
  staticMethods: {
    GetEncoding: (_rt, _s, args) => {
      const n = str(args[0]).toLowerCase();
      const e = Object.values(ENCODINGS).find((x) => x.webName === n || x.name === n.replace('-', ''));
      if (!e) throw new CsException('ArgumentException', `'${n}' is not a supported encoding name.`);
      return e;
    },
  },
});

export const BitConverterType = defineType({
  name: 'BitConverter',
  namespace: 'System',
  staticMethods: {
    ToString: (_rt, _s, args) => {
      const b = bytes(args[0]);
      return [...b].map((x) => x.toString(16).toUpperCase().padStart(2, '0')).join('-');
    },
    GetBytes: (_rt, _s, args) => {
      const v = args[0];
      if (typeof v === 'number') {
        const b = Buffer.alloc(4);
        b.writeInt32LE(v);
        return b;
      }
      if (typeof v === 'bigint') {
        const b = Buffer.alloc(8);
        b.writeBigInt64LE(v);
        return b;
      }
      if (typeof v === 'boolean') return Buffer.from([v ? 1 : 0]);
      if (v instanceof CsDouble) {
        const b = Buffer.alloc(8);
        b.writeDoubleLE(v.v);
        return b;
      }
      throw new CsException('ArgumentException', `BitConverter.GetBytes does not accept '${typeName(v)}'`);
    },
    ToInt32: (_rt, _s, args) => bytes(args[0]).readInt32LE(int(args[1] ?? 0)),
    ToInt64: (_rt, _s, args) => bytes(args[0]).readBigInt64LE(int(args[1] ?? 0)),
  },
  staticProps: { IsLittleEndian: prop(() => true) },
});

/** System.Text.StringBuilder. */
export class CsStringBuilder {
  value = '';
}

function sbAppend(rt: Rt, sb: CsStringBuilder, s: string): CsStringBuilder {
  checkStringLength(rt, sb.value.length + s.length);
  sb.value += s;
  return sb;
}

export const StringBuilderType = defineType({
  name: 'StringBuilder',
  namespace: 'System.Text',
  classes: [CsStringBuilder],
  construct: (rt, args) => {
    const sb = new CsStringBuilder();
    if (typeof args[0] === 'string') sbAppend(rt, sb, args[0]);
    return sb;
  },
  props: {
    Length: {
      get: (_rt, sb: CsStringBuilder) => sb.value.length,
      set: (rt, sb: CsStringBuilder, v) => {
        const length = int(v);
        if (length < 0)
          throw argError(
            "Length cannot be less than zero. (Parameter 'value')",
            'ArgumentOutOfRangeException',
          );
        checkStringLength(rt, length);
        sb.value = sb.value.slice(0, length).padEnd(length, '\0');
      },
    },
  },
  indexer: { get: (_rt, sb: CsStringBuilder, args) => new CsChar(sb.value.charCodeAt(int(args[0]))) },
  methods: {
    Append: (rt, sb: CsStringBuilder, args) => {
      if (args.length === 2 && args[0] instanceof CsChar) {
        const repeatCount = int(args[1]);
        if (repeatCount < 0)
          throw argError(
            "Count cannot be less than zero. (Parameter 'repeatCount')",
            'ArgumentOutOfRangeException',
          );
        checkStringLength(rt, sb.value.length + repeatCount);
        return sbAppend(rt, sb, String.fromCharCode(args[0].code).repeat(repeatCount));
      }
      return sbAppend(rt, sb, toDotNetStringRt(rt, args[0]));
    },
    AppendLine: (rt, sb: CsStringBuilder, args) =>
      sbAppend(rt, sb, `${args.length ? toDotNetStringRt(rt, args[0]) : ''}\n`),
    AppendFormat: (rt, sb: CsStringBuilder, args) =>
      sbAppend(rt, sb, compositeFormat(rt, str(args[0], 'format'), paramsArray(args, 1))),
    Insert: (rt, sb: CsStringBuilder, args) => {
      const i = int(args[0]);
      const value = toDotNetStringRt(rt, args[1]);
      checkStringLength(rt, sb.value.length + value.length);
      sb.value = sb.value.slice(0, i) + value + sb.value.slice(i);
      return sb;
    },
    Remove: (_rt, sb: CsStringBuilder, args) => {
      const i = int(args[0]);
      sb.value = sb.value.slice(0, i) + sb.value.slice(i + int(args[1]));
      return sb;
    },
    Replace: (rt, sb: CsStringBuilder, args) => {
      const oldValue = toDotNetStringRt(rt, args[0]);
      const newValue = toDotNetStringRt(rt, args[1]);
      if (oldValue === '') throw argError("String cannot be of zero length. (Parameter 'oldValue')");
      let hits = 0;
      for (
        let at = sb.value.indexOf(oldValue);
        at >= 0;
        at = sb.value.indexOf(oldValue, at + oldValue.length)
      )
        hits++;
      checkStringLength(rt, sb.value.length + hits * (newValue.length - oldValue.length));
      sb.value = sb.value.split(oldValue).join(newValue);
      return sb;
    },
    Clear: (_rt, sb: CsStringBuilder) => {
      sb.value = '';
      return sb;
    },
    ToString: (_rt, sb: CsStringBuilder) => sb.value,
  },
});

// ---- Uri / WebUtility ----

/** Uri.EscapeDataString: RFC 3986 unreserved characters stay, everything else is percent-encoded (upper-case hex). */
const UNRESERVED = /[A-Za-z0-9\-_.~]/;

/** The length escapeDataString(s) will have: %XX per UTF-8 byte of every character that is not unreserved. */
function escapedLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += UNRESERVED.test(s[i]!) ? 1 : 3;
    else if (c < 0x800) n += 6;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 12;
      i++;
    } else n += 9;
  }
  return n;
}

export function escapeDataString(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

class CsUri {
  constructor(
    readonly url: URL | null,
    readonly original: string,
  ) {}
}

const UriKind = UriKindEnum.members;

function uriOf(s: string, kind: number = UriKind.RelativeOrAbsolute): CsUri {
  try {
    return new CsUri(new URL(s), s);
  } catch {
    if (kind !== UriKind.Absolute) return new CsUri(null, s);
    throw new CsException(
      'UriFormatException',
      'Invalid URI: The format of the URI could not be determined.',
    );
  }
}

const abs = (u: CsUri): URL => {
  if (!u.url)
    throw new CsException('InvalidOperationException', 'This operation is not supported for a relative URI.');
  return u.url;
};

export const UriType = defineType({
  name: 'Uri',
  namespace: 'System',
  classes: [CsUri],
  construct: (_rt, args) => {
    if (args[0] instanceof CsUri && typeof args[1] === 'string')
      return uriOf(new URL(args[1], abs(args[0])).toString(), UriKind.Absolute);
    const kind = args[1] instanceof CsEnum ? args[1].value : UriKind.Absolute;
    return uriOf(str(args[0], 'uriString'), kind);
  },
  props: {
    Scheme: prop((u: CsUri) => abs(u).protocol.replace(/:$/, '')),
    Host: prop((u: CsUri) => abs(u).hostname),
    Port: prop((u: CsUri) => {
      const x = abs(u);
      return x.port ? Number(x.port) : x.protocol === 'https:' ? 443 : x.protocol === 'http:' ? 80 : -1;
    }),
    AbsolutePath: prop((u: CsUri) => abs(u).pathname),
    AbsoluteUri: prop((u: CsUri) => abs(u).toString()),
    PathAndQuery: prop((u: CsUri) => abs(u).pathname + abs(u).search),
    Query: prop((u: CsUri) => abs(u).search),
    Fragment: prop((u: CsUri) => abs(u).hash),
    Authority: prop((u: CsUri) => abs(u).host),
    IsAbsoluteUri: prop((u: CsUri) => u.url !== null),
    OriginalString: prop((u: CsUri) => u.original),
    Segments: prop((u: CsUri) => {
      const p = abs(u).pathname;
      return p.split(/(?<=\/)/);
    }),
  },
  methods: {
    ToString: (_rt, u: CsUri) => (u.url ? decodeUrlPath(u.url.toString()) : u.original),
    GetLeftPart: (_rt, u: CsUri, args) => {
      const x = abs(u);
      const part = (args[0] as CsEnum).value;
      if (part === UriPartialEnum.members.Scheme) return `${x.protocol}//`;
      if (part === UriPartialEnum.members.Authority) return `${x.protocol}//${x.host}`;
      if (part === UriPartialEnum.members.Path) return `${x.protocol}//${x.host}${x.pathname}`;
      return `${x.protocol}//${x.host}${x.pathname}${x.search}`;
    },
  },
  staticMethods: {
    EscapeDataString: (rt, _s, args) => {
      const s = str(args[0], 'stringToEscape');
      checkStringLength(rt, escapedLength(s));
      return escapeDataString(s);
    },
    UnescapeDataString: (_rt, _s, args) => safeDecode(str(args[0], 'stringToUnescape')),
    EscapeUriString: (_rt, _s, args) => encodeURI(str(args[0])),
    IsWellFormedUriString: (_rt, _s, args) => {
      const s = args[0];
      if (typeof s !== 'string') return false;
      const kind = args[1] instanceof CsEnum ? args[1].value : UriKind.RelativeOrAbsolute;
      try {
        new URL(s);
        return kind !== UriKind.Relative && !/\s/.test(s);
      } catch {
        return kind !== UriKind.Absolute && !/\s/.test(s) && s.length > 0;
      }
    },
    TryCreate: (_rt, _s, args) => {
      try {
        const u = uriOf(str(args[0]), UriKind.Absolute);
        (args[2] as { set(v: unknown): void }).set(u);
        return true;
      } catch {
        (args[2] as { set(v: unknown): void }).set(null);
        return false;
      }
    },
  },
});

function safeDecode(s: string): string {
  return s.replace(/(%[0-9A-Fa-f]{2})+/g, (m) => {
    try {
      return decodeURIComponent(m);
    } catch {
      return m;
    }
  });
}

const HTML_ESC: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export const WebUtilityType = defineType({
  name: 'WebUtility',
  namespace: 'System.Net',
  staticMethods: {
    // WebUtility.UrlEncode: spaces become '+', unreserved -_.!*() stay, hex upper-case.
    UrlEncode: (_rt, _s, args) =>
      args[0] === null
        ? null
        : encodeURIComponent(str(args[0]))
            .replace(/%20/g, '+')
            .replace(/[~']/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    UrlDecode: (_rt, _s, args) => (args[0] === null ? null : safeDecode(str(args[0]).replace(/\+/g, ' '))),
    HtmlEncode: (_rt, _s, args) =>
      args[0] === null ? null : str(args[0]).replace(/[&<>"']/g, (c) => HTML_ESC[c]!),
    HtmlDecode: (_rt, _s, args) =>
      args[0] === null
        ? null
        : str(args[0]).replace(
            /&(amp|lt|gt|quot|#39|#(\d+)|#x([0-9a-fA-F]+));/g,
            (m, name: string, dec?: string, hex?: string) => {
              if (dec) return String.fromCodePoint(Number(dec));
              if (hex) return String.fromCodePoint(Number.parseInt(hex, 16));
              return (
                ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" } as Record<string, string>)[name] ?? m
              );
            },
          ),
  },
});
