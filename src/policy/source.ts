/**
 * The text of one policy document before and after named values are substituted, with the mapping between
 * the two so every position reported to the user points into the file they wrote.
 */

/** One named value as configured: secret ones never appear in messages or logs. */
export interface NamedValue {
  readonly value: string;
  readonly secret?: boolean;
}

/** Where named values come from; `undefined` means "not defined". */
export type NamedValues = ReadonlyMap<string, NamedValue>;

/** API Management allows letters, digits, `.`, `-` and `_` in named-value names. */
const NAMED_VALUE = /\{\{([A-Za-z0-9._-]+)\}\}/g;

interface Edit {
  /** Range in the substituted text. */
  readonly from: number;
  readonly to: number;
  /** Range in the original text (the `{{name}}` reference). */
  readonly origFrom: number;
  readonly origTo: number;
}

/** A `{{name}}` reference that no named value defines, left in the text as written. */
export interface MissingNamedValue {
  readonly name: string;
  /** Offset in the substituted text. */
  readonly offset: number;
}

export class PolicySource {
  /** The text after named-value substitution: what the scanner and the XML parser read. */
  readonly text: string;
  readonly missing: readonly MissingNamedValue[];
  private readonly edits: readonly Edit[];
  private readonly lineStarts: readonly number[];
  private readonly secrets: readonly string[];

  constructor(
    readonly file: string,
    readonly original: string,
    namedValues: NamedValues = new Map(),
  ) {
    const edits: Edit[] = [];
    const missing: MissingNamedValue[] = [];
    let out = '';
    let last = 0;
    for (const match of original.matchAll(NAMED_VALUE)) {
      const name = match[1]!;
      const start = match.index;
      out += original.slice(last, start);
      last = start + match[0].length;
      const nv = namedValues.get(name);
      if (nv === undefined) {
        // Kept verbatim: Liquid templates use the same braces, so whether this is an error is decided later.
        missing.push({ name, offset: out.length });
        out += match[0];
        continue;
      }
      edits.push({ from: out.length, to: out.length + nv.value.length, origFrom: start, origTo: last });
      out += nv.value;
    }
    out += original.slice(last);
    this.text = out;
    this.edits = edits;
    this.missing = missing;
    this.secrets = [...namedValues.values()]
      .filter((nv) => nv.secret === true && nv.value.length > 0)
      .map((nv) => nv.value)
      .sort((a, b) => b.length - a.length);
    const starts = [0];
    for (let i = 0; i < original.length; i++) if (original.charCodeAt(i) === 10) starts.push(i + 1);
    this.lineStarts = starts;
  }

  /** Maps an offset in the substituted text to the original; inside a substituted value, to its `{{`. */
  toOriginal(offset: number): number {
    let lo = 0;
    let hi = this.edits.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.edits[mid]!.from <= offset) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return offset;
    const e = this.edits[found]!;
    if (offset < e.to) return e.origFrom;
    return e.origTo + (offset - e.to);
  }

  /** 1-based line and column in the original text of an offset in the substituted text. */
  position(offset: number): { line: number; column: number } {
    const orig = this.toOriginal(offset);
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= orig) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: orig - this.lineStarts[lo]! + 1 };
  }

  /** Replaces every secret named value in a message with `***`. */
  redact(message: string): string {
    let out = message;
    for (const secret of this.secrets) out = out.split(secret).join('***');
    return out;
  }
}
