/** System.Guid. */
import { randomUUID } from 'node:crypto';
import { defineType, formatError, prop } from '../runtime/core.js';
import { CsGuid } from '../runtime/values.js';
import { hashString, optStr, setOut, str } from './helpers.js';

const GUID_RE =
  /^[{(]?([0-9a-fA-F]{8})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{12})[})]?$/;

function parseGuid(s: string): CsGuid {
  const m = GUID_RE.exec(s.trim());
  if (!m) throw formatError(`Unrecognized Guid format.`);
  return new CsGuid(`${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}`.toLowerCase());
}

export const GuidType = defineType({
  name: 'Guid',
  namespace: 'System',
  classes: [CsGuid],
  defaultValue: new CsGuid('00000000-0000-0000-0000-000000000000'),
  construct: (_rt, args) =>
    args.length ? parseGuid(str(args[0])) : new CsGuid('00000000-0000-0000-0000-000000000000'),
  methods: {
    ToString: (_rt, g: CsGuid, args) => {
      const f = args.length ? (optStr(args[0]) ?? 'D') : 'D';
      switch (f) {
        case 'D':
        case 'd':
        case '':
          return g.value;
        case 'N':
        case 'n':
          return g.value.replace(/-/g, '');
        case 'B':
        case 'b':
          return `{${g.value}}`;
        case 'P':
        case 'p':
          return `(${g.value})`;
        default:
          throw formatError('Format string can be only "D", "d", "N", "n", "P", "p", "B", "b", "X" or "x".');
      }
    },
    GetHashCode: (_rt, g: CsGuid) => hashString(g.value),
    ToByteArray: (_rt, g: CsGuid) => {
      const h = g.value.replace(/-/g, '');
      const b = Buffer.from(h, 'hex');
      // .NET stores the first three groups little-endian.
      return Buffer.concat([
        b.subarray(0, 4).reverse(),
        b.subarray(4, 6).reverse(),
        b.subarray(6, 8).reverse(),
        b.subarray(8),
      ]);
    },
  },
  staticProps: { Empty: prop(() => new CsGuid('00000000-0000-0000-0000-000000000000')) },
  staticMethods: {
    NewGuid: () => new CsGuid(randomUUID()),
    Parse: (_rt, _s, args) => parseGuid(str(args[0], 'input')),
    TryParse: (_rt, _s, args) => {
      try {
        setOut(args[1], parseGuid(str(args[0])));
        return true;
      } catch {
        setOut(args[1], new CsGuid('00000000-0000-0000-0000-000000000000'));
        return false;
      }
    },
  },
});
