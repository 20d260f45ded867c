/** System.Text.Encoding and System.BitConverter: text and numbers to byte arrays and back. */
import { CsException, checkString, defineType, prop, typeName } from '../runtime/core.js';
import { type CsChar, CsDouble } from '../runtime/values.js';
import { bytes, int, str } from './helpers.js';

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
