/**
 * The explicit conversions LINQ to XML defines on XElement and XAttribute — `(int)element`, `(bool)attr`,
 * `(string)element` — which read the node's value with XmlConvert's rules (invariant, XML Schema lexical forms),
 * not with int.Parse's. https://learn.microsoft.com/dotnet/api/system.xml.linq.xelement#operators
 */
import { type ConversionTarget, CsException, formatError } from '../../runtime/core.js';
import { parseDecimalText } from '../../runtime/decimal.js';
import { CsDouble } from '../../runtime/values.js';

const INTEGER = /^[+-]?\d+$/;
// xs:decimal: no exponent, no thousands separators.
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const DOUBLE = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

const notValid = (text: string, type: string): CsException =>
  formatError(`The string '${text}' is not a valid ${type} value.`);

function integer(text: string, bits: 32 | 64): number | bigint {
  if (!INTEGER.test(text)) throw notValid(text, bits === 32 ? 'Int32' : 'Int64');
  const v = BigInt(text);
  const limit = bits === 32 ? 2147483648n : 9223372036854775808n;
  if (v >= limit || v < -limit) {
    throw new CsException('OverflowException', `Value was either too large or too small for an Int${bits}.`);
  }
  return bits === 32 ? Number(v) : v;
}

/** XmlConvert.ToXxx of a node's value; `(bool)` lower-cases first, as XElement's operator does. */
export function xmlValueTo(value: string, target: ConversionTarget): unknown {
  // XmlConvert trims XML whitespace (space, tab, CR, LF) around every lexical form.
  const text = value.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
  switch (target) {
    case 'string':
      return value;
    case 'int':
      return integer(text, 32);
    case 'long':
      return integer(text, 64);
    case 'bool': {
      const lower = text.toLowerCase();
      if (lower === 'true' || lower === '1') return true;
      if (lower === 'false' || lower === '0') return false;
      throw notValid(text, 'Boolean');
    }
    case 'double':
      if (text === 'INF') return new CsDouble(Number.POSITIVE_INFINITY);
      if (text === '-INF') return new CsDouble(Number.NEGATIVE_INFINITY);
      if (text === 'NaN') return new CsDouble(Number.NaN);
      if (!DOUBLE.test(text)) throw notValid(text, 'Double');
      return new CsDouble(Number(text));
    default: {
      const d = DECIMAL.test(text) ? parseDecimalText(text) : null;
      if (!d) throw notValid(text, 'Decimal');
      return d;
    }
  }
}
