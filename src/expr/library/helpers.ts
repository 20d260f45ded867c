/** Small helpers shared by the library tables: argument checks, out-parameters, composite formatting. */
import { OutRef } from '../compile/support.js';
import { toDotNetStringRt } from '../runtime/convert.js';
import {
  argError,
  BoundedText,
  CsException,
  checkSize,
  checkStringLength,
  findMethod,
  invalidCast,
  type Rt,
  step,
  typeName,
  typeOf,
} from '../runtime/core.js';
import { CsEnum, type EnumDef } from '../runtime/enum.js';
import { CsChar } from '../runtime/values.js';

export function str(v: unknown, what = 'value'): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined)
    throw new CsException('ArgumentNullException', `Value cannot be null. (Parameter '${what}')`);
  if (v instanceof CsChar) return String.fromCharCode(v.code);
  throw argError(`expected a string for '${what}', got '${typeName(v)}'`);
}

export function optStr(v: unknown): string | null {
  return v === null || v === undefined ? null : str(v);
}

export function int(v: unknown, what = 'value'): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof CsChar) return v.code;
  if (v instanceof CsEnum) return v.value;
  throw argError(`expected an integer for '${what}', got '${typeName(v)}'`);
}

export function bool(v: unknown, what = 'value'): boolean {
  if (typeof v === 'boolean') return v;
  throw argError(`expected a bool for '${what}', got '${typeName(v)}'`);
}

export function setOut(ref: unknown, value: unknown): void {
  if (!(ref instanceof OutRef)) throw argError('expected an out argument');
  ref.set(value);
}

export function isOut(v: unknown): v is OutRef {
  return v instanceof OutRef;
}

/** The number of a value of enum `def`, or null when `v` is not one. */
export function enumValue(v: unknown, def: EnumDef): number | null {
  if (v instanceof CsEnum && v.enumName === def.name) return v.value;
  return null;
}

export function arity(name: string, args: unknown[], ...allowed: number[]): void {
  if (!allowed.includes(args.length)) {
    throw new CsException(
      'MissingMethodException',
      `no overload of '${name}' takes ${args.length} arguments`,
    );
  }
}

export function toStringWithFormat(rt: Rt, v: unknown, format: string | null): string {
  if (v === null || v === undefined) return '';
  if (format === null) return toDotNetStringRt(rt, v);
  const m = findMethod(typeOf(v), 'ToString');
  return String(m!(rt, v, [format], []));
}

/** string.Format composite formatting: {index[,alignment][:format]} with {{ and }} escapes. */
export function compositeFormat(rt: Rt, fmt: string, args: unknown[]): string {
  const out = new BoundedText(rt);
  for (let i = 0; i < fmt.length; i++) {
    const ch = fmt[i]!;
    if (ch !== '{' && ch !== '}') {
      // Literal text up to the next brace, as one chunk.
      let end = i + 1;
      while (end < fmt.length && fmt[end] !== '{' && fmt[end] !== '}') end++;
      out.add(fmt.slice(i, end));
      i = end - 1;
      continue;
    }
    if (ch === '{') {
      if (fmt[i + 1] === '{') {
        out.add('{');
        i++;
        continue;
      }
      const close = fmt.indexOf('}', i);
      if (close < 0) throw new CsException('FormatException', 'Input string was not in a correct format.');
      const m = /^\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?(?::(.*))?$/s.exec(fmt.slice(i + 1, close));
      if (!m) throw new CsException('FormatException', 'Input string was not in a correct format.');
      const idx = Number(m[1]);
      if (idx >= args.length) {
        throw new CsException(
          'FormatException',
          'Index (zero based) must be greater than or equal to zero and less than the size of the argument list.',
        );
      }
      let text = toStringWithFormat(rt, args[idx], m[3] ?? null);
      const align = m[2] ? Number(m[2]) : 0;
      checkStringLength(rt, out.length + Math.max(text.length, Math.abs(align)));
      if (align > 0) text = text.padStart(align);
      else if (align < 0) text = text.padEnd(-align);
      out.add(text);
      i = close;
      continue;
    }
    // A '}' outside a format item must be doubled.
    if (fmt[i + 1] !== '}')
      throw new CsException('FormatException', 'Input string was not in a correct format.');
    out.add('}');
    i++;
  }
  return out.toString();
}

/** string.Join / string.Concat: the running length is checked as each item is rendered, before anything is joined. */
export function joinWithinLimit(rt: Rt, items: Iterable<unknown>, separator: string): string {
  const parts: string[] = [];
  let length = 0;
  for (const item of items) {
    const text = toDotNetStringRt(rt, item);
    length += text.length + (parts.length > 0 ? separator.length : 0);
    checkStringLength(rt, length);
    parts.push(text);
  }
  return parts.join(separator);
}

/** The items of each part in order, one step each and the size checked as it grows: an axis over a sequence. */
export function flattenCounted<T>(rt: Rt, parts: Iterable<readonly T[]>): T[] {
  const out: T[] = [];
  for (const part of parts) {
    for (const item of part) {
      step(rt);
      out.push(item);
    }
    checkSize(rt, out.length);
  }
  return out;
}

/** `params object[] args` — a single array argument is the params array itself. */
export function paramsArray(args: unknown[], from: number): unknown[] {
  if (args.length === from + 1 && Array.isArray(args[from])) return args[from] as unknown[];
  return args.slice(from);
}

/** A stable 32-bit hash (.NET randomises string hashes per process; any stable int is faithful). */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

/** A byte[] argument (a Buffer, or an array of numbers) as a Buffer; null is an ArgumentNullException naming `what`. */
export function bytes(v: unknown, what = 'bytes'): Buffer {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v)) return Buffer.from(v.map((x) => Number(x) & 255));
  if (v === null || v === undefined)
    throw new CsException('ArgumentNullException', `Value cannot be null. (Parameter '${what}')`);
  throw invalidCast(typeName(v), 'System.Byte[]');
}
