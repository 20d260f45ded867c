/** System.Text.StringBuilder, its growth counted against the string length limit. */
import { toDotNetStringRt } from '../runtime/convert.js';
import { argError, checkStringLength, defineType, type Rt } from '../runtime/core.js';
import { CsChar } from '../runtime/values.js';
import { compositeFormat, int, paramsArray, str } from './helpers.js';

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
