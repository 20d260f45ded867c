/**
 * Newtonsoft.Json.Linq.JRaw: `new JRaw("{\"a\":1}")` is a JValue of type Raw holding JSON text that a JObject or
 * JArray writes out unchanged (not quoted), as JsonWriter.WriteRawValue does. JRaw.Create is left out: it reads
 * from a JsonReader, not an allowed type. https://www.newtonsoft.com/json/help/html/T_Newtonsoft_Json_Linq_JRaw.htm
 */
import { toDotNetStringRt } from '../../runtime/convert.js';
import { defineType } from '../../runtime/core.js';
import { JRaw } from './tokens.js';
import { JValueType } from './types.js';

export const JRawType = defineType({
  name: 'JRaw',
  namespace: 'Newtonsoft.Json.Linq',
  base: JValueType,
  classes: [JRaw],
  construct: (rt, args) => {
    if (args[0] instanceof JRaw) return args[0].clone();
    return new JRaw(args[0] === null || args[0] === undefined ? null : toDotNetStringRt(rt, args[0]));
  },
});
