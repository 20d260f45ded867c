/**
 * System.IO.StringReader and StringWriter: a TextReader over a string and a TextWriter into a StringBuilder, with
 * .NET's rules (Read and Peek give -1 at the end, ReadLine ends a line at \r\n, \r or \n and gives null at the end,
 * a closed reader or writer throws ObjectDisposedException). WriteLine ends a line with "\n", as
 * StringBuilder.AppendLine does here. https://learn.microsoft.com/dotnet/api/system.io.stringreader, .stringwriter
 */
import { toDotNetStringRt } from '../runtime/convert.js';
import { argError, CsException, checkStringLength, defineType, type Rt } from '../runtime/core.js';
import { CsChar } from '../runtime/values.js';
import { compositeFormat, int, paramsArray, str } from './helpers.js';
import { CsStringBuilder } from './string-builder.js';

export class CsStringReader {
  position = 0;
  closed = false;
  constructor(readonly text: string) {}
}

export class CsStringWriter {
  closed = false;
  newLine = '\n';
  constructor(readonly builder: CsStringBuilder) {}
}

const disposed = (what: string): CsException =>
  new CsException(
    'ObjectDisposedException',
    `Cannot ${what} a closed ${what === 'read from' ? 'TextReader' : 'TextWriter'}.`,
  );

function open(r: CsStringReader): CsStringReader {
  if (r.closed) throw disposed('read from');
  return r;
}

/** Read(char[] buffer, int index, int count) and ReadBlock: characters into the buffer, how many were read. */
function readInto(r: CsStringReader, args: unknown[]): number {
  const buffer = args[0];
  if (!Array.isArray(buffer))
    throw argError("Value cannot be null. (Parameter 'buffer')", 'ArgumentNullException');
  const index = int(args[1]);
  const count = int(args[2]);
  if (index < 0 || count < 0) {
    throw argError('Non-negative number required.', 'ArgumentOutOfRangeException');
  }
  if (buffer.length - index < count) {
    throw argError(
      'Offset and length were out of bounds for the array or count is greater than the number of elements from index to the end of the source collection.',
    );
  }
  const n = Math.min(count, r.text.length - r.position);
  for (let i = 0; i < n; i++) buffer[index + i] = new CsChar(r.text.charCodeAt(r.position + i));
  r.position += n;
  return n;
}

function readLine(r: CsStringReader): string | null {
  const { text } = r;
  if (r.position >= text.length) return null;
  let end = r.position;
  while (end < text.length && text[end] !== '\n' && text[end] !== '\r') end++;
  const line = text.slice(r.position, end);
  r.position = end + (text[end] === '\r' && text[end + 1] === '\n' ? 2 : end < text.length ? 1 : 0);
  return line;
}

export const StringReaderType = defineType({
  name: 'StringReader',
  namespace: 'System.IO',
  classes: [CsStringReader],
  construct: (_rt, args) => {
    if (args[0] === null || args[0] === undefined) {
      throw argError("Value cannot be null. (Parameter 's')", 'ArgumentNullException');
    }
    return new CsStringReader(str(args[0], 's'));
  },
  methods: {
    Peek: (_rt, r: CsStringReader) => {
      open(r);
      return r.position < r.text.length ? r.text.charCodeAt(r.position) : -1;
    },
    Read: (_rt, r: CsStringReader, args) => {
      open(r);
      if (args.length === 3) return readInto(r, args);
      return r.position < r.text.length ? r.text.charCodeAt(r.position++) : -1;
    },
    ReadBlock: (_rt, r: CsStringReader, args) => readInto(open(r), args),
    ReadLine: (_rt, r: CsStringReader) => readLine(open(r)),
    ReadToEnd: (_rt, r: CsStringReader) => {
      open(r);
      const rest = r.text.slice(r.position);
      r.position = r.text.length;
      return rest;
    },
    Close: (_rt, r: CsStringReader) => {
      r.closed = true;
      return null;
    },
    Dispose: (_rt, r: CsStringReader) => {
      r.closed = true;
      return null;
    },
  },
});

function write(rt: Rt, w: CsStringWriter, s: string): void {
  if (w.closed) throw disposed('write to');
  checkStringLength(rt, w.builder.value.length + s.length);
  w.builder.value += s;
}

/** The text Write and WriteLine take: a value, a char[] (or a slice of one), or a composite format and its args. */
function writeText(rt: Rt, args: unknown[]): string {
  if (args.length === 0) return '';
  const [first] = args;
  if (Array.isArray(first) && first.every((c) => c instanceof CsChar)) {
    const chars = first as CsChar[];
    const slice = args.length === 3 ? chars.slice(int(args[1]), int(args[1]) + int(args[2])) : chars;
    return slice.map((c) => String.fromCharCode(c.code)).join('');
  }
  if (args.length > 1 && typeof first === 'string') return compositeFormat(rt, first, paramsArray(args, 1));
  return first === null || first === undefined ? '' : toDotNetStringRt(rt, first);
}

export const StringWriterType = defineType({
  name: 'StringWriter',
  namespace: 'System.IO',
  classes: [CsStringWriter],
  // new StringWriter() or new StringWriter(StringBuilder): the writer appends to that builder.
  construct: (_rt, args) =>
    new CsStringWriter(args[0] instanceof CsStringBuilder ? args[0] : new CsStringBuilder()),
  props: {
    NewLine: {
      get: (_rt, w: CsStringWriter) => w.newLine,
      set: (_rt, w: CsStringWriter, v) => {
        w.newLine = v === null || v === undefined ? '\n' : str(v);
      },
    },
  },
  methods: {
    Write: (rt, w: CsStringWriter, args) => {
      write(rt, w, writeText(rt, args));
      return null;
    },
    WriteLine: (rt, w: CsStringWriter, args) => {
      write(rt, w, writeText(rt, args) + w.newLine);
      return null;
    },
    GetStringBuilder: (_rt, w: CsStringWriter) => w.builder,
    Flush: () => null,
    Close: (_rt, w: CsStringWriter) => {
      w.closed = true;
      return null;
    },
    Dispose: (_rt, w: CsStringWriter) => {
      w.closed = true;
      return null;
    },
    // A closed StringWriter still gives its text, as in .NET.
    ToString: (_rt, w: CsStringWriter) => w.builder.value,
  },
});
