/**
 * Newtonsoft.Json.Linq's token model: JToken and its kinds, with Newtonsoft's parent rules (a token added where it
 * already has a parent is cloned). The type tables that expose them to expressions are in types.ts.
 */
import { argError, CsException } from '../../runtime/core.js';

export type JValueKind =
  | 'String'
  | 'Integer'
  | 'Float'
  | 'Boolean'
  | 'Null'
  | 'Date'
  | 'Guid'
  | 'TimeSpan'
  | 'Bytes'
  | 'Undefined'
  /** JRaw: JSON text written as it is. */
  | 'Raw';

export abstract class JToken {
  parent: JContainer | JProperty | null = null;
  abstract get tokenType(): string;
  abstract clone(): JToken;
}

export abstract class JContainer extends JToken {}

export class JValue extends JToken {
  constructor(
    readonly kind: JValueKind,
    /** string | number | bigint (Integer) | boolean | null | CsDateTime | CsGuid | Buffer */
    public value: unknown,
  ) {
    super();
  }
  get tokenType(): string {
    return this.kind;
  }
  clone(): JValue {
    return new JValue(this.kind, this.value);
  }
}

/** Newtonsoft's JRaw: a JValue whose value is JSON text, written out unchanged. */
export class JRaw extends JValue {
  constructor(raw: string | null) {
    super('Raw', raw);
  }
  override clone(): JRaw {
    return new JRaw(this.value as string | null);
  }
}

export class JProperty extends JToken {
  #value: JToken;
  constructor(
    readonly name: string,
    value: JToken,
  ) {
    super();
    this.#value = adopt(value, this);
  }
  get value(): JToken {
    return this.#value;
  }
  set value(v: JToken) {
    this.#value.parent = null;
    this.#value = adopt(v, this);
  }
  get tokenType(): string {
    return 'Property';
  }
  clone(): JProperty {
    return new JProperty(this.name, this.#value.clone());
  }
}

export class JObject extends JContainer {
  readonly props = new Map<string, JProperty>();
  get tokenType(): string {
    return 'Object';
  }
  get(name: string): JToken | null {
    return this.props.get(name)?.value ?? null;
  }
  set(name: string, value: JToken): void {
    const existing = this.props.get(name);
    if (existing) existing.value = value;
    else this.addProperty(new JProperty(name, value));
  }
  addProperty(p: JProperty): void {
    if (this.props.has(p.name)) {
      throw argError(
        `Can not add property ${p.name} to Newtonsoft.Json.Linq.JObject. Property with the same name already exists on object.`,
      );
    }
    const prop = p.parent ? p.clone() : p;
    prop.parent = this;
    this.props.set(prop.name, prop);
  }
  remove(name: string): boolean {
    const p = this.props.get(name);
    if (!p) return false;
    p.parent = null;
    return this.props.delete(name);
  }
  clone(): JObject {
    const o = new JObject();
    for (const p of this.props.values()) o.addProperty(p.clone());
    return o;
  }
}

export class JArray extends JContainer {
  readonly items: JToken[] = [];
  get tokenType(): string {
    return 'Array';
  }
  add(t: JToken): void {
    this.items.push(adopt(t, this));
  }
  clone(): JArray {
    const a = new JArray();
    for (const t of this.items) a.add(t.clone());
    return a;
  }
}

/** Newtonsoft clones a token that already has a parent when it is added elsewhere. */
export function adopt<T extends JToken>(t: T, parent: JContainer | JProperty): T {
  const token = t.parent ? (t.clone() as T) : t;
  token.parent = parent;
  return token;
}

export function removeFromParent(t: JToken): void {
  const p = t.parent;
  if (p === null) throw new CsException('InvalidOperationException', 'The parent is missing.');
  if (p instanceof JObject && t instanceof JProperty) p.remove(t.name);
  else if (p instanceof JArray) {
    const i = p.items.indexOf(t);
    if (i >= 0) p.items.splice(i, 1);
  } else if (p instanceof JProperty) {
    // Removing a property's value removes the property (Newtonsoft throws; we follow: "Cannot add or remove items from JProperty").
    throw new CsException(
      'InvalidOperationException',
      'Cannot add or remove items from Newtonsoft.Json.Linq.JProperty.',
    );
  }
  t.parent = null;
}

/** Newtonsoft's name for a token's kind, as its error messages use it. */
export const kindName = (t: JToken): string =>
  t instanceof JObject
    ? 'Object'
    : t instanceof JArray
      ? 'Array'
      : t instanceof JProperty
        ? 'Property'
        : (t as JValue).kind;

/** The values a container holds (an object's property values, an array's items); none for a value. */
export function children(t: JToken): JToken[] {
  if (t instanceof JObject) return [...t.props.values()].map((p) => p.value);
  if (t instanceof JArray) return t.items;
  return [];
}
