/**
 * Newtonsoft.Json.Linq.Extensions: the token axes and conversions on sequences of tokens (`arr.Children()
 * .Properties()`, `tokens.Values<int>()`), as extension methods of every IEnumerable whose items are JTokens.
 * LINQ to XML's Extensions has Ancestors and Descendants too: a call goes to the one whose items the sequence holds.
 * https://www.newtonsoft.com/json/help/html/T_Newtonsoft_Json_Linq_Extensions.htm
 */
import {
  argError,
  type CsType,
  defineExtensions,
  defineType,
  enumerate,
  findIndexer,
  invalidCast,
  type Method,
  type Rt,
  step,
  typeName,
} from '../../runtime/core.js';
import { flattenCounted } from '../helpers.js';
import { childTokens, tokenAncestors, tokenDescendants } from './axes.js';
import { toObject } from './conversions.js';
import { JObject, JToken, JValue } from './tokens.js';
import { JTokenType } from './types.js';

function source(rt: Rt, self: unknown, label = 'Newtonsoft.Json.Linq.JToken'): JToken[] {
  const out: JToken[] = [];
  for (const x of enumerate(self)) {
    step(rt);
    if (x === null || x === undefined) continue;
    if (!(x instanceof JToken)) throw invalidCast(typeName(x), label);
    out.push(x);
  }
  return out;
}

/** Convert<JToken, U>: the token itself for no or a token type argument, else its value as U. */
const convert = (rt: Rt, t: JToken, typeArgs: readonly CsType[]): unknown =>
  typeArgs[0] ? toObject(rt, t, typeArgs[0]) : t;

/** Values(key) on one token: its value (a JValue) or its children without a key, else `token[key]` when not null. */
function valuesOf(rt: Rt, t: JToken, key: unknown): JToken[] {
  if (key === undefined || key === null) return t instanceof JValue ? [t] : childTokens(t);
  const v = findIndexer(JTokenType)!.get(rt, t, [key]) as JToken | null;
  return v ? [v] : [];
}

const methods: Record<string, Method> = {
  Ancestors: (rt, self) => flattenCounted(rt, source(rt, self).map(tokenAncestors)),
  AncestorsAndSelf: (rt, self) =>
    flattenCounted(
      rt,
      source(rt, self).map((t) => [t, ...tokenAncestors(t)]),
    ),
  Descendants: (rt, self) =>
    flattenCounted(
      rt,
      source(rt, self).map((t) => tokenDescendants(t, () => step(rt))),
    ),
  DescendantsAndSelf: (rt, self) =>
    flattenCounted(
      rt,
      source(rt, self).map((t) => [t, ...tokenDescendants(t, () => step(rt))]),
    ),
  AsJEnumerable: (rt, self) => source(rt, self),
  Children: (rt, self, _args, typeArgs) =>
    flattenCounted(rt, source(rt, self).map(childTokens)).map((t) => convert(rt, t, typeArgs)),
  Properties: (rt, self) =>
    flattenCounted(
      rt,
      source(rt, self, 'Newtonsoft.Json.Linq.JObject').map((o) => {
        if (!(o instanceof JObject)) throw invalidCast(typeName(o), 'Newtonsoft.Json.Linq.JObject');
        return childTokens(o);
      }),
    ),
  Values: (rt, self, args, typeArgs) =>
    flattenCounted(
      rt,
      source(rt, self).map((t) => valuesOf(rt, t, args[0])),
    ).map((t) => convert(rt, t, typeArgs)),
};

defineExtensions({
  declaredBy: 'Newtonsoft.Json.Linq.Extensions',
  receiver: 'IEnumerable',
  itemClass: JToken,
  methods,
});

/** The static class, for the static call form, written qualified (System.Xml.Linq has an Extensions class too). */
export const JsonExtensionsType = defineType({
  name: 'Newtonsoft.Json.Linq.Extensions',
  staticMethods: {
    ...Object.fromEntries(
      Object.entries(methods).map(([k, m]) => [
        k,
        ((rt, _s, args, typeArgs) => m(rt, args[0], args.slice(1), typeArgs)) as Method,
      ]),
    ),
    // Value<U>(IEnumerable<JToken>): the sequence must be a token itself.
    Value: (rt, _s, args, typeArgs) => {
      if (!(args[0] instanceof JToken)) throw argError('Source value must be a JToken.');
      return convert(rt, args[0], typeArgs);
    },
  },
});
