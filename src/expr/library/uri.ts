/** System.Uri and System.Net.WebUtility: URI parts, escaping and unescaping, HTML encoding. */
import { decodeUrlPath } from '../context.js';
import { CsException, checkStringLength, defineType, prop } from '../runtime/core.js';
import { CsEnum } from '../runtime/enum.js';
import { UriKindEnum, UriPartialEnum } from './enums.js';
import { str } from './helpers.js';

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
