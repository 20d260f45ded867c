/**
 * Newtonsoft.Json's type tables: JToken/JObject/JArray/JValue/JProperty, JsonConvert, Formatting, JTokenType — what
 * expressions can reach of the token model (tokens.ts), the parser (parse.ts), the writer (write.ts), the
 * conversions (conversions.ts) and JSONPath (path.ts).
 */
import { toDotNetStringRt } from '../../runtime/convert.js';
import {
  argError,
  CsException,
  type CsType,
  checkSize,
  defineType,
  enumerate,
  invalidCast,
  type Method,
  prop,
  type Rt,
  step,
  typeName,
  typeOf,
} from '../../runtime/core.js';
import { CsEnum, makeEnum } from '../../runtime/enum.js';
import { CsDouble } from '../../runtime/values.js';
import { CsKeyValue } from '../collections.js';
import { defineEnumType } from '../enums.js';
import { enumValue, int, setOut, str } from '../helpers.js';
import { StringComparison } from '../string.js';
import { tokenAncestors, tokenDescendants } from './axes.js';
import { fromValue, jvalueRuntime, tokenTo, toObject } from './conversions.js';
import { parseJson } from './parse.js';
import { selectTokens } from './path.js';
import {
  adopt,
  children,
  JArray,
  type JContainer,
  JObject,
  JProperty,
  JToken,
  JValue,
  type JValueKind,
  kindName,
  removeFromParent,
} from './tokens.js';
import { serialize, writeJson } from './write.js';

export const FormattingEnum = makeEnum('Formatting', { None: 0, Indented: 1 });
defineEnumType(FormattingEnum, 'Newtonsoft.Json');

export const JTokenTypeEnum = makeEnum('JTokenType', {
  None: 0,
  Object: 1,
  Array: 2,
  Constructor: 3,
  Property: 4,
  Comment: 5,
  Integer: 6,
  Float: 7,
  String: 8,
  Boolean: 9,
  Null: 10,
  Undefined: 11,
  Date: 12,
  Raw: 13,
  Bytes: 14,
  Guid: 15,
  Uri: 16,
  TimeSpan: 17,
});
defineEnumType(JTokenTypeEnum, 'Newtonsoft.Json.Linq');

const formattingArg = (args: unknown[]): boolean => {
  const f = args.find((a) => a instanceof CsEnum);
  return f ? enumValue(f, FormattingEnum) === FormattingEnum.members.Indented : false;
};

function tokenArg(rt: Rt, v: unknown): JToken {
  return fromValue(rt, v);
}

function tokenValueAs(rt: Rt, t: JToken | null, typeArgs: readonly CsType[]): unknown {
  if (t === null) return null;
  const target = typeArgs[0];
  if (!target) return t;
  return toObject(rt, t, target);
}

const tokenMethods: Record<string, Method> = {
  ToString: (rt, self: JToken, args) => {
    if (self instanceof JValue && args.length === 0) return tokenTo(self, 'string') ?? '';
    return writeJson(rt, self, args.length === 0 ? true : formattingArg(args));
  },
  Value: (rt, self: JToken, args, typeArgs) => {
    // Without a key, Extensions.Value<U>(this IEnumerable<JToken>): the token itself as U.
    if (args.length === 0) return tokenValueAs(rt, self, typeArgs);
    const key = args[0];
    let t: JToken | null;
    if (self instanceof JObject) t = self.get(str(key, 'key'));
    else if (self instanceof JArray) t = self.items[int(key)] ?? null;
    else
      throw new CsException('InvalidOperationException', `Cannot access child value on ${kindName(self)}.`);
    return tokenValueAs(rt, t, typeArgs);
  },
  SelectToken: (_rt, self: JToken, args) => {
    const found = selectTokens(self, str(args[0], 'path'));
    if (found.length > 1) throw new CsException('JsonException', 'Path returned multiple tokens.');
    if (found.length === 0 && args[1] === true)
      throw new CsException('JsonException', `Path '${args[0]}' does not exist.`);
    return found[0] ?? null;
  },
  SelectTokens: (_rt, self: JToken, args) => selectTokens(self, str(args[0], 'path')),
  DeepClone: (_rt, self: JToken) => self.clone(),
  Remove: (_rt, self: JToken) => {
    removeFromParent(self);
    return null;
  },
  Replace: (rt, self: JToken, args) => {
    const p = self.parent;
    const v = tokenArg(rt, args[0]);
    if (p instanceof JProperty) p.value = v;
    else if (p instanceof JArray) {
      const i = p.items.indexOf(self);
      p.items[i] = adopt(v, p);
      self.parent = null;
    } else if (p instanceof JObject && self instanceof JProperty && v instanceof JProperty) {
      p.remove(self.name);
      p.addProperty(v);
    }
    return null;
  },
  Children: (_rt, self: JToken) => (self instanceof JObject ? [...self.props.values()] : children(self)),
  ToObject: (rt, self: JToken, _args, typeArgs) => toObject(rt, self, typeArgs[0]),
  Values: (rt, self: JToken, _args, typeArgs) => {
    const kids = self instanceof JObject ? [...self.props.values()].map((p) => p.value) : children(self);
    return typeArgs[0] ? kids.map((k) => toObject(rt, k, typeArgs[0])) : kids;
  },
  Equals: (_rt, self: JToken, args) => self === args[0],
  // JToken.Ancestors/AncestorsAndSelf and JContainer.Descendants/DescendantsAndSelf (a property's value included).
  Ancestors: (_rt, self: JToken) => tokenAncestors(self),
  AncestorsAndSelf: (_rt, self: JToken) => [self, ...tokenAncestors(self)],
  Descendants: (rt, self: JToken) => tokenDescendants(self, () => step(rt)),
  DescendantsAndSelf: (rt, self: JToken) => [self, ...tokenDescendants(self, () => step(rt))],
};

function pathOf(t: JToken): string {
  const parts: string[] = [];
  let cur: JToken = t;
  while (cur.parent) {
    const p: JContainer | JProperty = cur.parent;
    if (p instanceof JProperty) {
      parts.unshift(/^[A-Za-z_][\w]*$/.test(p.name) ? p.name : `['${p.name}']`);
      cur = p.parent ?? p;
      if (!p.parent) break;
      continue;
    }
    if (p instanceof JArray) parts.unshift(`[${p.items.indexOf(cur)}]`);
    cur = p;
  }
  return parts.join('.').replace(/\.\[/g, '[');
}

export const JTokenType = defineType({
  name: 'JToken',
  namespace: 'Newtonsoft.Json.Linq',
  aliases: ['JContainer'],
  classes: [],
  test: (v) => v instanceof JToken,
  explicitTo: tokenTo,
  convert: (v, explicit) => {
    if (v instanceof JToken) return v;
    if (
      !explicit &&
      (typeof v === 'string' ||
        typeof v === 'number' ||
        typeof v === 'boolean' ||
        typeof v === 'bigint' ||
        v instanceof CsDouble)
    ) {
      return fromValue(null as unknown as Rt, v);
    }
    throw invalidCast(typeName(v), 'Newtonsoft.Json.Linq.JToken');
  },
  props: {
    Type: prop((self: JToken) => JTokenTypeEnum.values.get(self.tokenType)!),
    Parent: prop((self: JToken) => self.parent),
    Root: prop((self: JToken) => {
      let c: JToken = self;
      while (c.parent) c = c.parent;
      return c;
    }),
    Path: prop((self: JToken) => pathOf(self)),
    HasValues: prop((self: JToken) => children(self).length > 0 || self instanceof JProperty),
    First: prop((self: JToken) =>
      self instanceof JObject ? ([...self.props.values()][0] ?? null) : (children(self)[0] ?? null),
    ),
    Last: prop((self: JToken) => {
      const c = self instanceof JObject ? [...self.props.values()] : children(self);
      return c[c.length - 1] ?? null;
    }),
    Next: prop((self: JToken) => sibling(self, 1)),
    Previous: prop((self: JToken) => sibling(self, -1)),
  },
  methods: tokenMethods,
  indexer: {
    get: (_rt, self: JToken, args) => {
      if (self instanceof JObject) return self.get(str(args[0], 'key'));
      if (self instanceof JArray) {
        const i = int(args[0]);
        if (i < 0 || i >= self.items.length) {
          throw new CsException(
            'ArgumentOutOfRangeException',
            "Index was out of range. Must be non-negative and less than the size of the collection. (Parameter 'index')",
          );
        }
        return self.items[i];
      }
      if (self instanceof JProperty) return (self.value as JToken) ?? null;
      throw new CsException('InvalidOperationException', `Cannot access child value on ${kindName(self)}.`);
    },
    set: (rt, self: JToken, args, v) => {
      if (self instanceof JObject) self.set(str(args[0], 'key'), tokenArg(rt, v));
      else if (self instanceof JArray) {
        const i = int(args[0]);
        if (i < 0 || i >= self.items.length)
          throw new CsException('ArgumentOutOfRangeException', 'Index was out of range.');
        self.items[i]!.parent = null;
        self.items[i] = adopt(tokenArg(rt, v), self);
      } else
        throw new CsException('InvalidOperationException', `Cannot set child value on ${kindName(self)}.`);
    },
  },
  staticMethods: {
    Parse: (rt, _s, args) => parseJson(str(args[0], 'json'), rt),
    FromObject: (rt, _s, args) => fromValue(rt, args[0]),
    DeepEquals: (rt, _s, args) =>
      writeJson(rt, tokenArg(rt, args[0]), false) === writeJson(rt, tokenArg(rt, args[1]), false),
  },
  enumerate: (self: JToken) => (self instanceof JObject ? [...self.props.values()] : children(self)),
});

function sibling(t: JToken, d: 1 | -1): JToken | null {
  const p = t.parent;
  if (p instanceof JArray) return p.items[p.items.indexOf(t) + d] ?? null;
  if (p instanceof JObject && t instanceof JProperty) {
    const list = [...p.props.values()];
    return list[list.indexOf(t) + d] ?? null;
  }
  return null;
}

function addToObject(rt: Rt, self: JObject, args: unknown[]): void {
  if (args.length === 2) {
    self.addProperty(new JProperty(str(args[0], 'propertyName'), tokenArg(rt, args[1])));
  } else if (args[0] instanceof JProperty) {
    self.addProperty(args[0]);
  } else if (args[0] !== null && typeof args[0] === 'object' && typeOf(args[0]).enumerate) {
    for (const p of enumerate(args[0])) addToObject(rt, self, [p]);
  } else {
    throw argError(`Can not add ${typeName(args[0])} to Newtonsoft.Json.Linq.JObject.`);
  }
  checkSize(rt, self.props.size);
}

export const JObjectType = defineType({
  name: 'JObject',
  namespace: 'Newtonsoft.Json.Linq',
  base: JTokenType,
  classes: [JObject],
  convert: (v) => {
    if (v instanceof JObject) return v;
    throw invalidCast(typeName(v), 'Newtonsoft.Json.Linq.JObject');
  },
  construct: (rt, args) => {
    const o = new JObject();
    if (args.length === 1 && args[0] instanceof JObject) return args[0].clone();
    for (const a of args.length === 1 && Array.isArray(args[0]) ? (args[0] as unknown[]) : args) {
      if (a === null) continue;
      addToObject(rt, o, [a]);
    }
    return o;
  },
  addItem: (rt, self: JObject, args) => addToObject(rt, self, args),
  props: {
    Count: prop((self: JObject) => self.props.size),
  },
  methods: {
    Add: (rt, self: JObject, args) => {
      addToObject(rt, self, args);
      return null;
    },
    Property: (_rt, self: JObject, args) => self.props.get(str(args[0], 'name')) ?? null,
    Properties: (_rt, self: JObject) => [...self.props.values()],
    ContainsKey: (_rt, self: JObject, args) => self.props.has(str(args[0], 'propertyName')),
    Remove: (_rt, self: JObject, args) => {
      if (args.length === 0) {
        removeFromParent(self);
        return null;
      }
      return self.remove(str(args[0], 'propertyName'));
    },
    TryGetValue: (_rt, self: JObject, args) => {
      const v = self.get(str(args[0], 'propertyName'));
      setOut(args[1], v);
      return v !== null;
    },
    GetValue: (_rt, self: JObject, args) => {
      const name = str(args[0], 'propertyName');
      if (
        args.length > 1 &&
        enumValue(args[1], StringComparison) === StringComparison.members.OrdinalIgnoreCase
      ) {
        for (const p of self.props.values()) if (p.name.toUpperCase() === name.toUpperCase()) return p.value;
        return null;
      }
      return self.get(name);
    },
    Merge: (rt, self: JObject, args) => {
      const other = tokenArg(rt, args[0]);
      if (other instanceof JObject) {
        for (const p of other.props.values()) {
          const mine = self.get(p.name);
          if (mine instanceof JObject && p.value instanceof JObject)
            JObjectType.methods.get('Merge')!(rt, mine, [p.value], []);
          else if (mine instanceof JArray && p.value instanceof JArray)
            for (const x of p.value.items) mine.add(x.clone());
          else self.set(p.name, p.value.clone());
        }
      }
      return null;
    },
  },
  staticMethods: {
    Parse: (rt, _s, args) => {
      const t = parseJson(str(args[0], 'json'), rt);
      if (!(t instanceof JObject)) {
        throw new CsException(
          'JsonReaderException',
          `Error reading JObject from JsonReader. Current JsonReader item is not an object: ${kindName(t)}.`,
        );
      }
      return t;
    },
    FromObject: (rt, _s, args) => {
      const t = fromValue(rt, args[0]);
      if (!(t instanceof JObject))
        throw argError(`Object serialized to ${kindName(t)}. JObject instance expected.`);
      return t;
    },
  },
  enumerate: (self: JObject) => [...self.props.values()].map((p) => new CsKeyValue(p.name, p.value)),
});

export const JArrayType = defineType({
  name: 'JArray',
  namespace: 'Newtonsoft.Json.Linq',
  base: JTokenType,
  classes: [JArray],
  construct: (rt, args) => {
    const a = new JArray();
    const src =
      args.length === 1 && args[0] !== null && typeof args[0] === 'object' && !(args[0] instanceof JToken)
        ? enumerate(args[0])
        : args;
    for (const x of src) {
      checkSize(rt, a.items.length + 1);
      a.add(tokenArg(rt, x));
    }
    return a;
  },
  addItem: (rt, self: JArray, args) => {
    checkSize(rt, self.items.length + 1);
    self.add(tokenArg(rt, args[0]));
  },
  props: { Count: prop((self: JArray) => self.items.length) },
  methods: {
    Add: (rt, self: JArray, args) => {
      checkSize(rt, self.items.length + 1);
      self.add(tokenArg(rt, args[0]));
      return null;
    },
    Insert: (rt, self: JArray, args) => {
      self.items.splice(int(args[0]), 0, adopt(tokenArg(rt, args[1]), self));
      return null;
    },
    RemoveAt: (_rt, self: JArray, args) => {
      const [t] = self.items.splice(int(args[0]), 1);
      if (t) t.parent = null;
      return null;
    },
    Remove: (_rt, self: JArray, args) => {
      if (args.length === 0) {
        removeFromParent(self);
        return null;
      }
      const i = self.items.indexOf(args[0] as JToken);
      if (i < 0) return false;
      self.items.splice(i, 1)[0]!.parent = null;
      return true;
    },
    Clear: (_rt, self: JArray) => {
      self.items.length = 0;
      return null;
    },
    IndexOf: (_rt, self: JArray, args) => self.items.indexOf(args[0] as JToken),
  },
  staticMethods: {
    Parse: (rt, _s, args) => {
      const t = parseJson(str(args[0], 'json'), rt);
      if (!(t instanceof JArray)) {
        throw new CsException(
          'JsonReaderException',
          `Error reading JArray from JsonReader. Current JsonReader item is not an array: ${kindName(t)}.`,
        );
      }
      return t;
    },
    FromObject: (rt, _s, args) => {
      const t = fromValue(rt, args[0]);
      if (!(t instanceof JArray))
        throw argError(`Object serialized to ${kindName(t)}. JArray instance expected.`);
      return t;
    },
  },
  enumerate: (self: JArray) => self.items,
});

export const JValueType = defineType({
  name: 'JValue',
  namespace: 'Newtonsoft.Json.Linq',
  base: JTokenType,
  classes: [JValue],
  // A JValue compared with a primitive compares its value (C# would compare references after an implicit
  // conversion — always false — which no policy relies on).
  valueEquals: (self: JValue, other) => {
    if (other instanceof JValue) return self.kind === other.kind && self.value === other.value;
    if (typeof other === 'string' || typeof other === 'boolean' || typeof other === 'number') {
      const target = typeof other === 'string' ? 'string' : typeof other === 'boolean' ? 'bool' : 'int';
      return self.kind !== 'Null' && tokenTo(self, target) === other;
    }
    return false;
  },
  construct: (rt, args) => {
    const t = fromValue(rt, args[0]);
    return t instanceof JValue ? t : new JValue('String', toDotNetStringRt(rt, args[0]));
  },
  props: {
    Value: {
      get: (_rt, self: JValue) => jvalueRuntime(self),
      set: (rt, self: JValue, v) => {
        const t = fromValue(rt, v) as JValue;
        (self as { kind: JValueKind }).kind = t.kind;
        self.value = t.value;
      },
    },
  },
  staticMethods: {
    CreateNull: () => new JValue('Null', null),
    CreateString: (_rt, _s, args) => new JValue('String', args[0] ?? null),
  },
});

export const JPropertyType = defineType({
  name: 'JProperty',
  namespace: 'Newtonsoft.Json.Linq',
  base: JTokenType,
  classes: [JProperty],
  construct: (rt, args) => {
    const name = str(args[0], 'name');
    if (args.length > 2) {
      // new JProperty("name", a, b, …) is a property holding an array of the values.
      const a = new JArray();
      for (const x of args.slice(1)) a.add(tokenArg(rt, x));
      return new JProperty(name, a);
    }
    return new JProperty(name, tokenArg(rt, args[1] ?? null));
  },
  props: {
    Name: prop((self: JProperty) => self.name),
    Value: {
      get: (_rt, self: JProperty) => self.value,
      set: (rt, self: JProperty, v) => {
        self.value = tokenArg(rt, v);
      },
    },
  },
});

// ---- JsonConvert ----

export const JsonConvertType = defineType({
  name: 'JsonConvert',
  namespace: 'Newtonsoft.Json',
  staticMethods: {
    SerializeObject: (rt, _s, args) => serialize(rt, args[0], formattingArg(args.slice(1))),
    DeserializeObject: (rt, _s, args, typeArgs) => {
      const text = str(args[0], 'value');
      const t = parseJson(text, rt);
      if (typeArgs[0]) return toObject(rt, t, typeArgs[0]);
      return t instanceof JValue ? jvalueRuntime(t) : t;
    },
    ToString: (rt, _s, args) => serialize(rt, args[0], false),
  },
});
