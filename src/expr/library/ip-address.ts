/**
 * System.Net.IPAddress: the members API Management lists (AddressFamily, Equals, GetAddressBytes, IsLoopback, Parse,
 * TryParse, ToString) — typically `IPAddress.Parse(context.Request.IpAddress)` to compare a caller's address.
 * Parsing and printing follow .NET's own rules (System.Net.IPAddressParser, IPv4AddressHelper.ParseNonCanonical and
 * IPv6AddressHelper in dotnet/runtime), not Node's: "10.1" is 10.0.0.1, "0x7f.1" is 127.0.0.1, "010.0.0.1" is
 * 8.0.0.1, an IPv6 address may be bracketed with a port, and ::ffff:a.b.c.d prints with its IPv4 part.
 * https://learn.microsoft.com/dotnet/api/system.net.ipaddress.parse
 */
import { CsException, defineType, prop } from '../runtime/core.js';
import { makeEnum } from '../runtime/enum.js';
import { arity, setOut, str } from './helpers.js';

/**
 * System.Net.Sockets.AddressFamily: the type of IPAddress.AddressFamily. The table does not allow the enum's own
 * name, so it is a value only (it prints, compares and casts to int) and not a type an expression can write.
 */
const AddressFamily = makeEnum('AddressFamily', { InterNetwork: 2, InterNetworkV6: 23 });

export class CsIPAddress {
  constructor(
    /** 4 bytes for IPv4, 16 for IPv6, in network order. */
    readonly bytes: Buffer,
    readonly scopeId = 0,
  ) {}
  get isV6(): boolean {
    return this.bytes.length === 16;
  }
}

const badAddress = (): CsException =>
  new CsException('FormatException', 'An invalid IP address was specified.');

const IPV4_MAX = 0xffffffff;

/**
 * IPv4 as .NET reads it: one to four parts separated by dots, each decimal, octal (leading 0) or hex (0x); the
 * last part fills the bytes the others leave ("1.2" is 1.0.0.2). Null when it is not an IPv4 address.
 */
function parseIPv4(text: string): Buffer | null {
  const parts = text.split('.');
  if (parts.length > 4) return null;
  const values: number[] = [];
  for (const part of parts) {
    // Digits are bounded so a long run cannot lose precision before the range check (.NET stops at overflow).
    const m = /^(?:0[xX]0*([0-9a-fA-F]{1,9})|0+([0-7]{0,11})|([1-9][0-9]{0,10}))$/.exec(part);
    if (!m) return null;
    const value =
      m[1] !== undefined
        ? Number.parseInt(m[1], 16)
        : m[2] !== undefined
          ? Number.parseInt(`0${m[2]}`, 8)
          : Number(m[3]);
    if (value > IPV4_MAX) return null;
    values.push(value);
  }
  const last = values.pop()!;
  if (values.some((v) => v > 0xff)) return null;
  // The last part fills what the leading ones leave: 32, 24, 16 or 8 bits.
  const lastBits = 32 - values.length * 8;
  if (lastBits < 32 && last >= 2 ** lastBits) return null;
  const out = Buffer.alloc(4);
  out.writeUInt32BE(values.reduce((acc, v, i) => acc + v * 2 ** (24 - i * 8), 0) + last);
  return out;
}

/** The dotted quad IPv6 allows at its end: exactly four decimal parts of at most 255. */
function canonicalIPv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.map(Number);
}

/** IPv6: optional brackets (and a port after them), one `::`, an optional trailing IPv4 part, a `%scope`. */
function parseIPv6(text: string): CsIPAddress | null {
  let body = text;
  if (body.startsWith('[')) {
    const close = body.indexOf(']');
    if (close < 0) return null;
    const rest = body.slice(close + 1);
    if (rest !== '' && !/^:(?:0x[0-9a-fA-F]*|\d*)$/.test(rest)) return null;
    body = body.slice(1, close);
  }
  let scopeId = 0;
  const percent = body.indexOf('%');
  if (percent >= 0) {
    const scope = body.slice(percent + 1);
    body = body.slice(0, percent);
    // A numeric scope is the interface index; a name would be looked up among the machine's interfaces, which are
    // not the caller's business here: it counts as no scope, as .NET does for an unknown name.
    if (/^\d+$/.test(scope) && Number(scope) <= IPV4_MAX) scopeId = Number(scope);
  }
  if (body.startsWith(':') && !body.startsWith('::')) return null;
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const groups = (half: string): number[] | null => {
    if (half === '') return [];
    const out: number[] = [];
    const items = half.split(':');
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (i === items.length - 1 && item.includes('.')) {
        const v4 = canonicalIPv4(item);
        if (!v4) return null;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(item)) {
        out.push(Number.parseInt(item, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return null;
  // A trailing IPv4 part is only allowed at the very end.
  if (halves.length === 2 && halves[0]!.includes('.')) return null;
  const count = head.length + tail.length;
  if (halves.length === 2 ? count > 7 : count !== 8) return null;
  const words = [...head, ...new Array<number>(8 - count).fill(0), ...tail];
  const bytes = Buffer.alloc(16);
  for (const [i, w] of words.entries()) bytes.writeUInt16BE(w, i * 2);
  return new CsIPAddress(bytes, scopeId);
}

/** IPAddress.Parse's rule: a colon means IPv6, anything else is read as IPv4. Null when neither reads. */
export function parseIPAddress(text: string): CsIPAddress | null {
  if (text.includes(':')) return parseIPv6(text);
  const v4 = parseIPv4(text);
  return v4 ? new CsIPAddress(v4) : null;
}

/** IPv6 as .NET prints it: lower-case hex, the longest run of two or more zero groups as `::`, IPv4 tails. */
function formatIPv6(a: CsIPAddress): string {
  const words = Array.from({ length: 8 }, (_, i) => a.bytes.readUInt16BE(i * 2));
  const embedded =
    (words.slice(0, 4).every((w) => w === 0) &&
      words[6] !== 0 &&
      ((words[4] === 0 && (words[5] === 0 || words[5] === 0xffff)) ||
        (words[4] === 0xffff && words[5] === 0))) ||
    (words[4] === 0 && words[5] === 0x5efe);
  const sections = (ws: number[]): string => {
    let best = -1;
    let bestLength = 0;
    let run = 0;
    ws.forEach((w, i) => {
      run = w === 0 ? run + 1 : 0;
      if (run > bestLength) {
        bestLength = run;
        best = i - run + 1;
      }
    });
    const hex = (list: number[]): string => list.map((w) => w.toString(16)).join(':');
    if (bestLength < 2) return hex(ws);
    return `${hex(ws.slice(0, best))}::${hex(ws.slice(best + bestLength))}`;
  };
  let text: string;
  if (embedded) {
    const head = sections(words.slice(0, 6));
    text = `${head}${head.endsWith(':') ? '' : ':'}${[...a.bytes.subarray(12)].join('.')}`;
  } else {
    text = sections(words);
  }
  return a.scopeId !== 0 ? `${text}%${a.scopeId}` : text;
}

export function formatIPAddress(a: CsIPAddress): string {
  return a.isV6 ? formatIPv6(a) : [...a.bytes].join('.');
}

function parseOrThrow(v: unknown): CsIPAddress {
  const parsed = parseIPAddress(str(v, 'ipString'));
  if (!parsed) throw badAddress();
  return parsed;
}

const IPV6_LOOPBACK = Buffer.from([...new Array<number>(15).fill(0), 1]);
/** 127.0.0.1 mapped to IPv6, which .NET also counts as loopback (IPAddress.IsLoopback, dotnet/runtime). */
const MAPPED_LOOPBACK = Buffer.from([...new Array<number>(10).fill(0), 0xff, 0xff, 127, 0, 0, 1]);

defineType({
  name: 'IPAddress',
  namespace: 'System.Net',
  classes: [CsIPAddress],
  props: {
    AddressFamily: prop((a: CsIPAddress) =>
      AddressFamily.values.get(a.isV6 ? 'InterNetworkV6' : 'InterNetwork'),
    ),
  },
  methods: {
    GetAddressBytes: (_rt, a: CsIPAddress) => Buffer.from(a.bytes),
    ToString: (_rt, a: CsIPAddress) => formatIPAddress(a),
    // Equals compares the family, the bytes and an IPv6 scope; `==` stays reference equality, as IPAddress does not
    // overload it.
    Equals: (_rt, a: CsIPAddress, args) =>
      args[0] instanceof CsIPAddress && a.bytes.equals(args[0].bytes) && a.scopeId === args[0].scopeId,
  },
  staticMethods: {
    Parse: (_rt, _s, args) => {
      arity('IPAddress.Parse', args, 1);
      return parseOrThrow(args[0]);
    },
    TryParse: (_rt, _s, args) => {
      arity('IPAddress.TryParse', args, 2);
      const parsed = typeof args[0] === 'string' ? parseIPAddress(args[0]) : null;
      setOut(args[1], parsed);
      return parsed !== null;
    },
    /** 127.0.0.0/8; for IPv6 exactly ::1 or ::ffff:127.0.0.1, without a scope (.NET compares with Equals). */
    IsLoopback: (_rt, _s, args) => {
      const a = args[0];
      if (!(a instanceof CsIPAddress)) {
        throw new CsException('ArgumentNullException', "Value cannot be null. (Parameter 'address')");
      }
      if (!a.isV6) return a.bytes[0] === 127;
      return a.scopeId === 0 && (a.bytes.equals(IPV6_LOOPBACK) || a.bytes.equals(MAPPED_LOOPBACK));
    },
  },
});
